import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hostToolPack, loadToolPack, ToolPackLoadError } from '@gatehouse/runtime';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('loading a tool pack', () => {
  it('loads the one pack a package directory exports, by a path relative to the working directory', async () => {
    const pack = await loadToolPack('./tiny-pack', fixtures);
    expect(pack.name).toBe('tiny');
  });

  it('loads a pack from a module file by an absolute path', async () => {
    const pack = await loadToolPack(`${fixtures}tiny-pack/index.mjs`);
    expect(pack.name).toBe('tiny');
  });

  it('asks which pack to load when a module exports several, and loads the one named after #', async () => {
    await expect(loadToolPack('./two-packs/index.mjs', fixtures)).rejects.toThrow(/exports 2 tool packs \(first, second\); name one/);
    expect((await loadToolPack('./two-packs/index.mjs#second', fixtures)).name).toBe('tiny');
    await expect(loadToolPack('./tiny-pack#notAPack', fixtures)).rejects.toThrow(
      /no tool pack exported as notAPack \(it exports tinyPack\)/,
    );
  });

  it('refuses a path that does not exist, a module without a pack and an empty name, each with a typed error', async () => {
    const refusals = await Promise.allSettled([loadToolPack('./no-such-pack', fixtures), loadToolPack('node:path'), loadToolPack('')]);
    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      const reason = (refusal as PromiseRejectedResult).reason as ToolPackLoadError;
      expect(reason).toBeInstanceOf(ToolPackLoadError);
      expect(reason.code).toBe('PACK_LOAD_FAILED');
    }
  });
});

describe('hosting a tool pack', () => {
  it('reads the pack’s own configuration once and hands it to setup, so the tools see it', async () => {
    const hosted = await hostToolPack(await loadToolPack('./tiny-pack', fixtures), { TINY_PREFIX: '>> ' });
    expect(hosted.catalog.tools().map((t) => t.address)).toEqual(['echo_text.v1']);
    expect(Object.keys(hosted.roles)).toEqual(['echo-reader']);
    expect(hosted.rolesFile).toBe(`${fixtures}tiny-pack/roles.json`);
    expect(hosted.approversFile).toBeUndefined();
    const [echo] = hosted.implementations;
    expect(await echo?.run({ text: 'hi' }, {} as never)).toEqual({ text: 'hi', prefix: '>> ' });
  });

  it('names a required variable the environment lacks before anything starts', async () => {
    await expect(hostToolPack(await loadToolPack('./tiny-pack', fixtures), {})).rejects.toThrow(/TINY_PREFIX: required/);
  });

  it('takes a deployment’s roles file over the pack’s own, and names one that cannot be read', async () => {
    const pack = await loadToolPack('./tiny-pack', fixtures);
    const hosted = await hostToolPack(pack, { TINY_PREFIX: 'x' }, { rolesFile: `${fixtures}override-roles.json` });
    expect(Object.keys(hosted.roles)).toEqual(['echo-auditor']);
    await expect(hostToolPack(pack, { TINY_PREFIX: 'x' }, { rolesFile: `${fixtures}missing-roles.json` })).rejects.toThrow(
      /roles file .*missing-roles\.json cannot be read/,
    );
  });
});
