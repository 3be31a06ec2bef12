// Validates the deployment files offline: every Kubernetes object under deploy/k8s against the
// Kubernetes 1.34 OpenAPI schemas (kubernetes-models, compiled Ajv validators) and KEDA's CRD
// schema (@kubernetes-models/keda); unknown fields via TypeScript's excess-property check on the
// same models (the schemas alone accept any extra key); YAML that reads differently as YAML 1.1
// (kubectl) and 1.2; references between objects; and docker-compose.yml's structure.
// Usage: node scripts/validate-manifests.mjs   (exit 1 on any finding)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments, parse } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const K8S = join(ROOT, 'deploy/k8s');
/** Files kept beside the applied set on purpose (kustomization.yaml must list every other one). */
const ALTERNATIVES = new Set(['autoscaling/executor-hpa.yaml']);
/** Where each API group's models live; an apiVersion outside this map is an error, not a skip. */
const MODEL_PACKAGES = {
  '': 'kubernetes-models/v1',
  apps: 'kubernetes-models/apps',
  batch: 'kubernetes-models/batch',
  policy: 'kubernetes-models/policy',
  autoscaling: 'kubernetes-models/autoscaling',
  'keda.sh': '@kubernetes-models/keda/keda.sh',
};

const findings = [];
const fail = (where, message) => findings.push(`${where}: ${message}`);

function yamlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Parses every document; YAML 1.1 (what kubectl reads) and 1.2 must agree, e.g. on 0440 or `on`. */
function load(file) {
  const text = readFileSync(file, 'utf8');
  const docs = parseAllDocuments(text, { version: '1.1', uniqueKeys: true });
  const docs12 = parseAllDocuments(text, { version: '1.2', uniqueKeys: true });
  const out = [];
  docs.forEach((doc, i) => {
    for (const e of [...doc.errors, ...doc.warnings]) fail(rel(file), `YAML: ${e.message}`);
    const value = doc.toJS();
    const differs = firstDifference(value, docs12[i]?.toJS());
    if (differs !== '')
      fail(
        rel(file),
        `document ${i + 1} at ${differs} reads differently as YAML 1.1 (kubectl) and 1.2: quote it, or write octal modes in decimal`,
      );
    if (value !== null && value !== undefined) out.push(value);
  });
  return out;
}

const rel = (file) => relative(ROOT, file);

/** The path of the first value that differs between a and b ('' when equal). */
function firstDifference(a, b, path = '') {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return isDeepStrictEqual(a, b) ? '' : path || '/';
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = firstDifference(a[k], b[k], `${path}/${k}`);
    if (d !== '') return d;
  }
  return '';
}
const id = (o) => `${o.kind}/${o.metadata?.name ?? '?'}`;

/** apiVersion + kind → the module exporting the model class `Kind` and its interface `IKind`. */
function modelModule(o) {
  const [group, version] = String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/') : ['', o.apiVersion];
  const pkg = MODEL_PACKAGES[group];
  if (pkg === undefined) return undefined;
  return group === '' ? `${pkg}/${o.kind}` : `${pkg}/${version}/${o.kind}`;
}

async function validateSchemas(objects) {
  for (const { file, o } of objects) {
    const spec = modelModule(o);
    if (spec === undefined) {
      fail(rel(file), `${id(o)}: no schema for apiVersion ${o.apiVersion}`);
      continue;
    }
    let Model;
    try {
      Model = (await import(spec))[o.kind];
    } catch {
      Model = undefined;
    }
    if (typeof Model !== 'function') {
      fail(rel(file), `${id(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (error) {
      fail(rel(file), `${id(o)}: ${error.message}`);
    }
  }
}

/** Unknown fields: each object becomes a typed object literal, so TypeScript names any extra key. */
function validateKnownFields(objects) {
  // One line per object, so a diagnostic's line is the object's index.
  const body = objects.map(({ o }, i) => {
    const spec = modelModule(o);
    return spec === undefined ? '\n' : `export const o${i}: import('${spec}').I${o.kind} = ${JSON.stringify(o)};\n`;
  });
  const name = join(ROOT, 'deploy/k8s/__manifests__.ts');
  const source = body.join('');
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang, ...rest) => (file === name ? ts.createSourceFile(file, source, lang) : read(file, lang, ...rest));
  host.fileExists = (
    (exists) => (file) =>
      file === name || exists(file)
  )(host.fileExists.bind(host));
  const program = ts.createProgram([name], options, host);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const line = d.file === undefined ? -1 : d.file.getLineAndCharacterOfPosition(d.start ?? 0).line;
    const hit = objects[line];
    const where = hit === undefined ? 'manifests' : `${rel(hit.file)}: ${id(hit.o)}`;
    fail(where, ts.flattenDiagnosticMessageText(d.messageText, ' ').replace(/\s+/g, ' '));
  }
}

const podSpecOf = (o) => (o.kind === 'Job' || o.kind === 'Deployment' ? o.spec?.template?.spec : undefined);
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);

/** What the schemas cannot know: names that must line up, restricted pod security, our own figures. */
function validateReferences(objects) {
  const by = (kind) => objects.filter(({ o }) => o.kind === kind).map(({ o }) => o);
  const named = (kind, name) => by(kind).find((o) => o.metadata?.name === name);
  const namespaces = new Set(by('Namespace').map((o) => o.metadata.name));
  const env = named('ConfigMap', 'gatehouse-env')?.data ?? {};
  const keys = (kind, name) => {
    const o = named(kind, name);
    return o === undefined ? undefined : new Set(Object.keys({ ...o.data, ...o.stringData }));
  };
  const needKey = (where, kind, name, key) => {
    const have = keys(kind, name);
    if (have === undefined) fail(where, `${kind} ${name} is not defined`);
    else if (key !== undefined && !have.has(key)) fail(where, `${kind} ${name} has no key ${key}`);
  };
  for (const { file, o } of objects) {
    const where = `${rel(file)}: ${id(o)}`;
    if (o.kind !== 'Namespace' && !namespaces.has(o.metadata?.namespace))
      fail(where, `namespace ${o.metadata?.namespace} is not one of the defined namespaces`);
    if (o.kind === 'Deployment' && !matches(o.spec.selector?.matchLabels, o.spec.template?.metadata?.labels))
      fail(where, 'selector does not match the pod template labels');
    const pod = podSpecOf(o);
    if (pod !== undefined) {
      const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
      if (pod.securityContext?.runAsNonRoot !== true || pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault')
        fail(where, 'pod must set runAsNonRoot and seccompProfile RuntimeDefault');
      for (const v of volumes.values()) {
        if (v.configMap !== undefined)
          for (const item of v.configMap.items ?? [{}]) needKey(where, 'ConfigMap', v.configMap.name, item.key);
        if (v.secret !== undefined) for (const item of v.secret.items ?? [{}]) needKey(where, 'Secret', v.secret.secretName, item.key);
      }
      for (const c of pod.containers ?? []) {
        const sc = c.securityContext ?? {};
        if (sc.allowPrivilegeEscalation !== false || sc.readOnlyRootFilesystem !== true || !(sc.capabilities?.drop ?? []).includes('ALL'))
          fail(where, `${c.name}: needs allowPrivilegeEscalation false, readOnlyRootFilesystem true, capabilities.drop [ALL]`);
        for (const r of ['requests', 'limits'])
          for (const q of ['cpu', 'memory'])
            if (c.resources?.[r]?.[q] === undefined) fail(where, `${c.name}: resources.${r}.${q} is missing`);
        const entry = c.command?.find((a) => /^((services\/[^/]+|examples\/[^/]+\/[^/]+)\/dist\/main\.js|scripts\/[\w-]+\.mjs)$/.test(a));
        const source = entry?.replace(/dist\/main\.js$/, 'src/main.ts');
        if (source === undefined || !existsSync(join(ROOT, source)))
          fail(where, `${c.name}: command ${JSON.stringify(c.command)} names no entry point of this repo`);
        for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) fail(where, `${c.name}: volumeMount ${m.name} has no volume`);
        for (const r of c.envFrom ?? [])
          if (r.configMapRef) needKey(where, 'ConfigMap', r.configMapRef.name);
          else if (r.secretRef) needKey(where, 'Secret', r.secretRef.name);
        for (const e of c.env ?? []) {
          const s = e.valueFrom?.secretKeyRef,
            m = e.valueFrom?.configMapKeyRef;
          if (s) needKey(where, 'Secret', s.name, s.key);
          if (m) needKey(where, 'ConfigMap', m.name, m.key);
        }
        const ports = new Set((c.ports ?? []).map((p) => p.name));
        for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
          const port = c[probe]?.httpGet?.port;
          if (typeof port === 'string' && !ports.has(port)) fail(where, `${c.name}: ${probe} uses unknown port ${port}`);
        }
        if (o.kind === 'Deployment' && (c.readinessProbe?.httpGet?.path !== '/readyz' || c.livenessProbe?.httpGet?.path !== '/healthz'))
          fail(where, `${c.name}: readiness must probe /readyz and liveness /healthz`);
      }
    }
    if (o.kind === 'Service' || o.kind === 'PodDisruptionBudget') {
      const selector = o.kind === 'Service' ? o.spec.selector : o.spec.selector?.matchLabels;
      const pods = by('Deployment').filter((d) => matches(selector, d.spec.template.metadata.labels));
      if (pods.length !== 1) fail(where, `selector matches ${pods.length} Deployments, expected 1`);
      const ports = new Set(pods.flatMap((d) => d.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name))));
      for (const p of o.kind === 'Service' ? o.spec.ports : [])
        if (typeof p.targetPort === 'string' && !ports.has(p.targetPort))
          fail(where, `targetPort ${p.targetPort} is not a port of the selected pods`);
    }
    if (o.kind === 'ScaledObject' || o.kind === 'HorizontalPodAutoscaler') {
      if (named(o.spec.scaleTargetRef?.kind ?? 'Deployment', o.spec.scaleTargetRef?.name) === undefined)
        fail(where, `scaleTargetRef ${o.spec.scaleTargetRef?.name} is not defined`);
      const max = o.spec.maxReplicaCount ?? o.spec.maxReplicas;
      if (max > Number(env.GATEHOUSE_TOPIC_PARTITIONS))
        fail(
          where,
          `max replicas ${max} exceeds GATEHOUSE_TOPIC_PARTITIONS ${env.GATEHOUSE_TOPIC_PARTITIONS}: the extra executors would own no partition`,
        );
      if ((o.spec.minReplicaCount ?? o.spec.minReplicas) < 2) fail(where, 'keep at least 2 executors');
    }
    if (o.kind === 'ScaledObject') {
      for (const t of o.spec.triggers ?? []) {
        const m = t.metadata ?? {};
        if (t.type !== 'kafka') fail(where, `trigger type ${t.type} is not kafka`);
        if (m.consumerGroup !== env.EXECUTOR_GROUP_ID)
          fail(where, `consumerGroup ${m.consumerGroup} is not EXECUTOR_GROUP_ID ${env.EXECUTOR_GROUP_ID}`);
        if (m.topic !== `${env.GATEHOUSE_TOPIC_PREFIX ?? ''}gatehouse.execute`) fail(where, `topic ${m.topic} is not gatehouse.execute`);
        if (m.bootstrapServers !== env.KAFKA_BROKERS)
          fail(where, `bootstrapServers ${m.bootstrapServers} is not KAFKA_BROKERS ${env.KAFKA_BROKERS}`);
      }
    }
    if (o.kind === 'Deployment' && o.metadata.name === 'executor') {
      if (!(o.spec.template.spec.terminationGracePeriodSeconds >= 30))
        fail(where, 'terminationGracePeriodSeconds must leave the 15 s drain plus the Kafka disconnect (>= 30)');
      const idEnv = o.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'EXECUTOR_ID');
      if (idEnv?.valueFrom?.fieldRef?.fieldPath !== 'metadata.name')
        fail(where, 'EXECUTOR_ID must be the pod name (fieldRef metadata.name)');
    }
  }
  const files = named('ConfigMap', 'gatehouse-policy-files')?.data ?? {};
  for (const f of ['roles.json', 'policy-table.json']) {
    if (
      !isDeepStrictEqual(
        JSON.parse(files[f] ?? 'null'),
        JSON.parse(readFileSync(join(ROOT, 'examples', 'customer-support', 'pack', 'config', f), 'utf8')),
      )
    )
      fail('deploy/k8s/config.yaml', `gatehouse-policy-files ${f} differs from examples/customer-support/pack/config/${f}`);
  }
  const mcpFiles = named('ConfigMap', 'gatehouse-mcp-files')?.data ?? {};
  if (
    !isDeepStrictEqual(
      JSON.parse(mcpFiles['agent-policy.json'] ?? 'null'),
      JSON.parse(readFileSync(join(ROOT, 'examples', 'customer-support', 'pack', 'config', 'agent-policy.json'), 'utf8')),
    )
  )
    fail(
      'deploy/k8s/config.yaml',
      'gatehouse-mcp-files agent-policy.json differs from examples/customer-support/pack/config/agent-policy.json',
    );
}

function validateKustomization() {
  const k = parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8'));
  const listed = new Set(k.resources ?? []);
  for (const r of listed) if (!existsSync(join(K8S, r))) fail('deploy/k8s/kustomization.yaml', `resource ${r} does not exist`);
  for (const f of yamlFiles(K8S).map((f) => relative(K8S, f))) {
    if (f !== 'kustomization.yaml' && !listed.has(f) && !ALTERNATIVES.has(f))
      fail('deploy/k8s/kustomization.yaml', `${f} is neither listed nor a known alternative`);
  }
  if ([...listed].filter((r) => r.startsWith('autoscaling/')).length !== 1)
    fail('deploy/k8s/kustomization.yaml', 'exactly one executor autoscaler must be listed');
}

/** docker-compose.yml: well-formed, every Gatehouse service starts an entry point of this repo with a healthcheck. */
function validateCompose() {
  const file = join(ROOT, 'docker-compose.yml');
  const doc = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true, uniqueKeys: true })[0];
  for (const e of [...doc.errors, ...doc.warnings]) fail('docker-compose.yml', `YAML: ${e.message}`);
  const services = doc.toJS()?.services ?? {};
  const published = [];
  for (const [name, s] of Object.entries(services)) {
    const where = `docker-compose.yml: ${name}`;
    if (typeof s.image !== 'string') fail(where, 'has no image');
    for (const dep of Object.keys(s.depends_on ?? {})) if (!(dep in services)) fail(where, `depends_on ${dep}, which is not a service`);
    for (const p of s.ports ?? []) published.push(Number(String(p).split(':')[0]));
    const entry = s.command?.find?.((a) => /^(services\/[^/]+|examples\/[^/]+\/[^/]+)\/dist\/main\.js$/.test(a));
    if (entry !== undefined) {
      if (!existsSync(join(ROOT, entry.replace(/dist\/main\.js$/, 'src/main.ts')))) fail(where, `${entry} is no entry point of this repo`);
      if (s.healthcheck?.test === undefined) fail(where, 'has no healthcheck');
      if (s.environment?.KAFKA_BROKERS === undefined) fail(where, 'does not take the x-gatehouse-env settings');
    }
  }
  const expected = [5432, 6379, 8081, 8090, 8091, 8093, 8095, 9092];
  if (
    !isDeepStrictEqual(
      [...published].sort((a, b) => a - b),
      expected,
    )
  )
    fail('docker-compose.yml', `published ports ${published.join(',')} are not ${expected.join(',')}`);
  return Object.keys(services).length;
}

const files = yamlFiles(K8S).filter((f) => !f.endsWith('kustomization.yaml'));
const objects = files.flatMap((file) => load(file).map((o) => ({ file, o })));
await validateSchemas(objects);
validateKnownFields(objects);
validateReferences(objects);
validateKustomization();
const composeServices = validateCompose();
for (const f of findings) console.error(`✗ ${f}`);
const kinds = [...new Set(objects.map(({ o }) => o.kind))].sort().join(', ');
console.log(
  `validate-manifests: ${objects.length} Kubernetes objects in ${files.length} files (${kinds}) and ${composeServices} compose services: ${findings.length === 0 ? 'valid' : `${findings.length} finding(s)`}`,
);
process.exitCode = findings.length === 0 ? 0 : 1;
