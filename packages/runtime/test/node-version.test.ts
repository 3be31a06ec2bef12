import { describe, expect, it } from 'vitest';
import { unsupportedNode } from '@gatehouse/runtime';

describe('the Node a service runs on', () => {
  it.each([
    ['24.0.0', true],
    ['24.22.3', true],
    ['v25.1.0', true],
    ['22.22.0', true],
    ['22.23.5', true],
    ['22.21.9', false],
    ['v20.20.2', false],
    ['18.20.0', false],
    ['23.11.0', false],
  ])('%s: supported %s', (version, supported) => {
    expect(unsupportedNode(version) === undefined).toBe(supported);
  });

  it('names the Node it needs and the Node it is', () => {
    expect(unsupportedNode('v20.20.2')).toBe('Gatehouse needs Node ^22.22.0 || >=24.0.0; this is Node 20.20.2');
  });
});
