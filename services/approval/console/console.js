// Gatehouse approval console. No framework, no build step. Everything shown comes from the stored
// canonical request on the server; every value from it is untrusted (an agent wrote parts of it),
// so it only ever reaches the page as text nodes (textContent), never as HTML.
'use strict';

(() => {
  const TOKEN_KEY = 'gatehouse.approval.token';
  // The proposal whose approval sent the person to sign in again; only this page's own script sets it.
  const STEP_UP_KEY = 'gatehouse.approval.step-up';
  const POLL_MS = 5000;
  const $ = (id) => document.getElementById(id);

  // Why a sign-in or a session ended, as the person reads it (the server's codes).
  const SIGN_IN_ERRORS = {
    NOT_AN_APPROVER: 'You signed in, but your groups at the identity provider make you no approver here.',
    NO_TENANT: 'You signed in, but your identity provider names no tenant you approve for.',
    SIGN_IN_FAILED: 'The sign-in could not be completed. Try again.',
    SESSION_EXPIRED: 'The identity provider no longer vouches for your session. Sign in again.',
    SESSION_INVALID: 'Your session has ended. Sign in again.',
  };

  const state = {
    token: sessionStorage.getItem(TOKEN_KEY),
    config: { sign_in: null, demo_tokens: false },
    me: null,
    items: [],
    selected: null,
    detail: null,
    clockOffset: 0,
    busy: false,
  };

  /** Builds an element; string children become text nodes, so no markup is ever parsed. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs ?? {})) {
      if (value === false || value === null || value === undefined) continue;
      if (name === 'class') node.className = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function announce(text, kind) {
    const status = $('status');
    status.textContent = text;
    status.className = `status ${kind ?? ''}`;
  }

  /** A call on the session cookie (with its CSRF token on every change), or with the demo token. */
  async function api(method, path, body, quiet) {
    const headers = {};
    if (state.token !== null) headers.authorization = `Bearer ${state.token}`;
    else if (method !== 'GET' && state.me?.csrf_token) headers['x-csrf-token'] = state.me.csrf_token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await response.json().catch(() => ({}));
    // A step-up is not a sign-out: the approver is sent to sign in again, then comes back to this decision.
    if (response.status === 401 && !quiet && payload.error?.code !== 'STEP_UP_REQUIRED') {
      signOut(SIGN_IN_ERRORS[payload.error?.code] ?? 'You are not signed in. Sign in again.');
      throw new Error('unauthorized');
    }
    return { status: response.status, body: payload };
  }

  // ---- time ------------------------------------------------------------------------------------
  const serverNow = () => Date.now() + state.clockOffset;

  function timeLeft(expiresAt) {
    const ms = expiresAt - serverNow();
    if (ms <= 0) return 'expired';
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, '0');
    return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min` : `${m}:${sec} left`;
  }

  function tick() {
    for (const node of document.querySelectorAll('[data-expires]')) {
      const left = timeLeft(Number(node.dataset.expires));
      node.textContent = left;
      node.classList.toggle('urgent', Number(node.dataset.expires) - serverNow() < 60000);
    }
    const approve = $('approve');
    if (approve !== null && state.detail !== null && state.detail.expires_at <= serverNow()) {
      approve.disabled = true;
      $('reject').disabled = true;
    }
  }

  // ---- formatting ------------------------------------------------------------------------------
  function pretty(jsonText) {
    if (jsonText === null) return '(absent)';
    try {
      const value = JSON.parse(jsonText);
      return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    } catch {
      return jsonText;
    }
  }

  function money(amount) {
    try {
      const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: amount.currency });
      const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
      return format.format(amount.minor / 10 ** digits);
    } catch {
      return `${amount.minor} minor units of ${amount.currency}`;
    }
  }

  const targetText = (t) => `${t.type} ${t.id}${t.version === null ? '' : ` @ v${t.version}`}`;

  function envBadge(environment) {
    return el(
      'span',
      { class: environment === 'production' ? 'env prod' : 'env' },
      environment === 'production' ? 'PRODUCTION' : environment,
    );
  }

  // ---- list ------------------------------------------------------------------------------------
  function renderList() {
    const list = $('list');
    list.replaceChildren();
    $('count').textContent = state.items.length === 0 ? '' : `(${state.items.length})`;
    $('list-empty').hidden = state.items.length !== 0;
    for (const item of state.items) {
      const selected = item.proposal_id === state.selected;
      const button = el(
        'button',
        {
          type: 'button',
          class: 'item',
          'data-id': item.proposal_id,
          'aria-current': selected ? 'true' : false,
          onclick: () => select(item.proposal_id, true),
        },
        el('span', { class: 'item-top' }, el('span', { class: 'tool' }, item.tool), envBadge(item.environment)),
        el('span', { class: 'effect' }, item.effect),
        el(
          'span',
          { class: 'item-meta' },
          el('span', null, `${item.tenant} · ${targetText(item.target)}`),
          el('span', { class: 'left', 'data-expires': item.expires_at }, timeLeft(item.expires_at)),
        ),
      );
      list.append(el('li', null, button));
    }
  }

  async function refresh() {
    if (state.me === null) return;
    const { status, body } = await api('GET', '/api/approvals?state=pending');
    if (status !== 200) return;
    state.items = body.approvals;
    if (state.items.length > 0) state.clockOffset = state.items[0].server_now - Date.now();
    const hadFocus = document.activeElement?.classList.contains('item') ? document.activeElement.dataset.id : null;
    renderList();
    if (hadFocus !== null) document.querySelector(`.item[data-id="${CSS.escape(hadFocus)}"]`)?.focus();
    if (state.selected !== null && !state.items.some((i) => i.proposal_id === state.selected) && state.detail?.state === 'pending') {
      await select(state.selected, false);
    }
  }

  // ---- detail ----------------------------------------------------------------------------------
  async function select(proposalId, focusDetail) {
    state.selected = proposalId;
    const { status, body } = await api('GET', `/api/approvals/${encodeURIComponent(proposalId)}`);
    if (status !== 200) {
      state.detail = null;
      $('detail').replaceChildren(el('p', { class: 'empty' }, 'This proposal is no longer available.'));
      renderList();
      return;
    }
    state.detail = body;
    state.clockOffset = body.server_now - Date.now();
    renderList();
    renderDetail(body);
    if (focusDetail) $('detail-title').focus();
  }

  function field(label, ...value) {
    return [el('dt', null, label), el('dd', null, ...value)];
  }

  function renderDetail(d) {
    const r = d.request;
    const diff = r.diff;
    const parts = [];
    parts.push(el('p', { class: 'eyebrow' }, `${r.tool} · tenant ${r.tenant}`));
    parts.push(el('h2', { id: 'detail-title', tabindex: '-1' }, r.effect));

    parts.push(
      el(
        'dl',
        { class: 'facts' },
        field('Environment', envBadge(r.environment)),
        field('Target', targetText(r.target)),
        field('Records affected', String(diff.affected_records)),
        field('Approver role required', el('span', { class: 'role' }, r.approver_role)),
        field(
          'Time left',
          d.state === 'pending' ? el('span', { class: 'left', 'data-expires': d.expires_at }, timeLeft(d.expires_at)) : d.state,
        ),
        field('Requested by', `${r.principal} (run ${r.run_id})`),
        ...(d.recent_sign_in_s === null
          ? []
          : field(
              'Recent sign-in required',
              `within ${d.recent_sign_in_s} s${d.sign_in_again ? ': approving takes you to sign in again first' : ''}`,
            )),
        field(
          'On behalf of',
          r.on_behalf_of
            ? `${r.on_behalf_of.name ?? r.on_behalf_of.subject} (${r.on_behalf_of.subject} at ${r.on_behalf_of.issuer})`
            : 'no person named',
        ),
      ),
    );

    if (diff.irreversible.length > 0) {
      parts.push(
        el(
          'div',
          { class: 'warning', role: 'note', 'aria-label': 'Irreversible consequences' },
          el('strong', null, 'Cannot be undone'),
          el(
            'ul',
            null,
            diff.irreversible.map((text) => el('li', null, text)),
          ),
        ),
      );
    }

    parts.push(el('h3', null, 'Changes'));
    if (diff.changes.length === 0) parts.push(el('p', { class: 'muted' }, 'No field changes.'));
    else {
      parts.push(
        el(
          'table',
          { class: 'changes' },
          el(
            'thead',
            null,
            el('tr', null, el('th', { scope: 'col' }, 'Field'), el('th', { scope: 'col' }, 'Before'), el('th', { scope: 'col' }, 'After')),
          ),
          el(
            'tbody',
            null,
            diff.changes.map((c) =>
              el(
                'tr',
                null,
                el('th', { scope: 'row' }, c.field),
                el('td', { class: 'before' }, el('pre', null, pretty(c.before))),
                el('td', { class: 'after' }, el('pre', null, pretty(c.after))),
              ),
            ),
          ),
        ),
      );
    }

    const amountText =
      diff.amount === null
        ? 'None'
        : [
            el('strong', null, money(diff.amount)),
            el('span', { class: 'muted' }, ` (${diff.amount.minor} minor units ${diff.amount.currency})`),
          ];
    parts.push(
      el(
        'dl',
        { class: 'facts wide' },
        field('Amount', amountText),
        field(
          'Recipients',
          diff.recipients.length === 0
            ? 'None'
            : el(
                'ul',
                { class: 'plain' },
                diff.recipients.map((x) => el('li', null, x)),
              ),
        ),
        field('Proposal', el('code', null, d.proposal_id)),
        field('arguments_sha256', el('code', { class: 'hash' }, r.arguments_sha256)),
      ),
    );
    parts.push(
      el(
        'details',
        null,
        el('summary', null, 'Canonical arguments (exactly what will run)'),
        el('pre', { class: 'args' }, pretty(r.arguments)),
      ),
    );

    parts.push(actions(d));
    $('detail').replaceChildren(...parts);
    tick();
  }

  function actions(d) {
    if (d.state !== 'pending') {
      const person = d.decider === null ? null : (d.decider.name ?? null);
      const who = d.decided_by === null ? '' : ` by ${person === null ? d.decided_by : `${person} (${d.decided_by})`}`;
      return el(
        'p',
        { class: `decided ${d.state}` },
        `This proposal was ${d.state}${who}.${d.reason === null ? '' : ` Reason: ${d.reason}`}`,
      );
    }
    if (!d.may_decide) {
      const why =
        d.may_not_because === 'SELF_APPROVAL'
          ? 'This agent acts on your behalf; someone else must decide.'
          : `You do not hold the role ${d.approver_role} this decision requires.`;
      return el('p', { class: 'decided' }, why);
    }
    const reason = el('textarea', { id: 'reason', name: 'reason', rows: '2', maxlength: '500', 'aria-describedby': 'reason-help' });
    const error = el('p', { id: 'reject-error', class: 'error', role: 'alert' });
    return el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          id: 'approve',
          class: 'primary',
          // Only the person's own click or key press decides: a script's synthetic click does not.
          onclick: (event) => {
            if (event.isTrusted) void approve(d);
          },
        },
        'Approve this exact change',
      ),
      el(
        'form',
        { class: 'reject', novalidate: true, onsubmit: (event) => (event.preventDefault(), void reject(d, reason, error)) },
        el('label', { for: 'reason' }, 'Reason for rejecting'),
        reason,
        el('button', { type: 'submit', id: 'reject', class: 'danger' }, 'Reject'),
        el('p', { id: 'reason-help', class: 'muted small' }, 'Required, up to 500 characters. The agent receives it.'),
        error,
      ),
    );
  }

  /** Sends a decision with what this page showed: the server refuses it if the stored proposal differs. */
  async function decide(d, path, extra) {
    if (state.busy) return null;
    state.busy = true;
    const shown = { arguments_sha256: d.request.arguments_sha256, target_version: d.request.target.version };
    try {
      return await api('POST', `/api/approvals/${encodeURIComponent(d.proposal_id)}/${path}`, { ...shown, ...extra });
    } finally {
      state.busy = false;
    }
  }

  /** The server holds another version of the proposal than the one shown: show it afresh, decide nothing. */
  async function mismatch(d, reply) {
    if (reply.body.error?.code !== 'PROPOSAL_MISMATCH') return false;
    announce('This proposal differs from the one shown. It has been reloaded: read it again before deciding.', 'bad');
    await select(d.proposal_id, true);
    return true;
  }

  async function afterDecision(d, text) {
    const index = state.items.findIndex((i) => i.proposal_id === d.proposal_id);
    state.items = state.items.filter((i) => i.proposal_id !== d.proposal_id);
    announce(text, 'ok');
    const next = state.items[Math.min(Math.max(index, 0), state.items.length - 1)];
    state.selected = null;
    state.detail = null;
    renderList();
    if (next === undefined) {
      $('detail').replaceChildren(el('p', { class: 'empty' }, 'Nothing selected.'));
      return;
    }
    await select(next.proposal_id, false);
    document.querySelector(`.item[data-id="${CSS.escape(next.proposal_id)}"]`)?.focus();
  }

  async function approve(d) {
    const reply = await decide(d, 'approve');
    if (reply === null) return;
    if (reply.body.error?.code === 'STEP_UP_REQUIRED' && typeof reply.body.error.sign_in === 'string') {
      // Back from the identity provider the proposal is shown again; the person presses Approve again.
      sessionStorage.setItem(STEP_UP_KEY, d.proposal_id);
      announce('This approval needs a recent sign-in: taking you to the identity provider.', 'bad');
      window.location.assign(reply.body.error.sign_in);
      return;
    }
    if (await mismatch(d, reply)) return;
    if (reply.status === 200 || reply.status === 202) await afterDecision(d, `Approved ${d.proposal_id}.`);
    else announce(reply.body.error?.message ?? `Could not approve (HTTP ${reply.status}).`, 'bad');
  }

  async function reject(d, textarea, error) {
    const reason = textarea.value.trim();
    if (reason.length === 0) {
      error.textContent = 'Say why: the agent uses the reason to plan again.';
      textarea.focus();
      return;
    }
    const reply = await decide(d, 'reject', { reason });
    if (reply === null) return;
    if (await mismatch(d, reply)) return;
    if (reply.status === 200 || reply.status === 202) await afterDecision(d, `Rejected ${d.proposal_id}.`);
    else error.textContent = reply.body.error?.message ?? `Could not reject (HTTP ${reply.status}).`;
  }

  // ---- keyboard --------------------------------------------------------------------------------
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'j' && event.key !== 'k') return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target?.isContentEditable) return;
    const buttons = [...document.querySelectorAll('.item')];
    if (buttons.length === 0) return;
    event.preventDefault();
    const current = buttons.indexOf(document.activeElement);
    const from = current >= 0 ? current : buttons.findIndex((b) => b.getAttribute('aria-current') === 'true');
    const to = event.key === 'j' ? Math.min(from + 1, buttons.length - 1) : Math.max(from - 1, 0);
    buttons[to === -1 ? 0 : to].focus();
  });

  // ---- session ---------------------------------------------------------------------------------
  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    Object.assign(state, { token: null, me: null, items: [], selected: null, detail: null });
    $('workspace').hidden = true;
    $('who').hidden = true;
    $('sign-in').hidden = false;
    $('sign-in-error').textContent = message ?? '';
    $('sign-in-idp').hidden = state.config.sign_in === null;
    $('sign-in-idp-help').hidden = state.config.sign_in === null;
    $('sign-in-form').hidden = !state.config.demo_tokens;
    if (state.config.sign_in !== null) $('sign-in-idp').focus();
    else if (state.config.demo_tokens) $('token').focus();
  }

  /** Ends the session here and at the identity provider (its own page says so), or forgets the demo token. */
  async function signOutEverywhere() {
    if (state.token !== null) return signOut('Signed out.');
    const { status, body } = await api('POST', '/logout', undefined, true);
    if (status === 200 && typeof body.end_session_url === 'string') window.location.assign(body.end_session_url);
    else signOut('Signed out.');
  }

  async function start(quiet) {
    const { status, body } = await api('GET', '/api/me', undefined, quiet);
    if (status !== 200) return false;
    state.me = body;
    $('who-name').textContent = (body.name ?? body.identity) + (body.demo ? ' (demo)' : '');
    $('who-name').title = `${body.identity} · ${body.issuer}`;
    $('who-roles').textContent = body.roles.length === 0 ? 'no approving role' : body.roles.join(', ');
    $('who').hidden = false;
    $('sign-in').hidden = true;
    $('workspace').hidden = false;
    await refresh();
    document.querySelector('.item')?.focus();
    return true;
  }

  $('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token').value.trim();
    if (token === '') {
      $('sign-in-error').textContent = 'Enter your token.';
      return;
    }
    state.token = token;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('token').value = '';
    void start().catch(() => undefined);
  });
  $('sign-out').addEventListener('click', () => void signOutEverywhere().catch(() => signOut('Signed out.')));

  async function boot() {
    const config = await fetch('/auth/config')
      .then((r) => r.json())
      .catch(() => null);
    if (config !== null) state.config = config;
    const hash = window.location.hash;
    const error = /^#sign-in-error=([A-Z_]+)$/.exec(hash)?.[1];
    // A link only opens a proposal. Nothing in the address ever decides: only the person's own press of Approve does.
    const open = /^#proposal=([A-Za-z0-9_.:-]+)$/.exec(hash)?.[1];
    const steppedUp = sessionStorage.getItem(STEP_UP_KEY);
    sessionStorage.removeItem(STEP_UP_KEY);
    if (hash !== '') history.replaceState(null, '', window.location.pathname);
    // A session cookie, when the identity provider has just signed the person in, or a demo token.
    if (error === undefined && (await start(true).catch(() => false))) {
      if (open === undefined) return;
      await select(open, true);
      if (open === steppedUp && state.detail?.state === 'pending' && state.detail.may_decide) {
        announce('You signed in again. Nothing was approved yet: check the proposal and press Approve again to approve it.', 'ok');
      }
      return;
    }
    signOut(error === undefined ? '' : (SIGN_IN_ERRORS[error] ?? 'The sign-in could not be completed.'));
  }

  // Marks the page once everything its load does is done (for people's assistive tools and for tests).
  const booted = () => document.body.setAttribute('data-booted', 'true');

  setInterval(tick, 1000);
  setInterval(() => void refresh().catch(() => undefined), POLL_MS);
  void boot().finally(booted);
})();
