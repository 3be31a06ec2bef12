import { describe, expect, it } from 'vitest';
import { CliError, ExitCode, formatBytes, formatDuration, formatFields, formatTable, parseDuration, relativeTime } from '@gatehouse/cli';

describe('durations', () => {
  it('parses plain milliseconds and s, m, h, d suffixes', () => {
    expect(parseDuration('900000', '--ttl')).toBe(900_000);
    expect(parseDuration('90s', '--ttl')).toBe(90_000);
    expect(parseDuration('15m', '--ttl')).toBe(900_000);
    expect(parseDuration('2h', '--ttl')).toBe(7_200_000);
    expect(parseDuration('1d', '--ttl')).toBe(86_400_000);
  });

  it('refuses anything else as a usage error naming the option', () => {
    for (const text of ['soon', '15 minutes', '-5m', '0', '1.5h', '']) {
      const error = (() => {
        try {
          parseDuration(text, '--ttl');
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, text).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(ExitCode.usage);
      expect((error as CliError).message).toContain('--ttl');
    }
  });

  it('formats durations with at most two units and times relative to now', () => {
    expect(formatDuration(450)).toBe('450ms');
    expect(formatDuration(899_000)).toBe('14m59s');
    expect(formatDuration(90_061_000)).toBe('1d1h');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(relativeTime(1_000 + 60_000, 1_000)).toBe('in 1m');
    expect(relativeTime(1_000, 1_000 + 5_000)).toBe('5s ago');
  });

  it('formats sizes in bytes, KiB and MiB', () => {
    expect(formatBytes(19)).toBe('19 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MiB');
  });
});

describe('tables', () => {
  const columns = [
    { header: 'NAME', cell: (r: { name: string; size: number }) => r.name, max: 8 },
    { header: 'SIZE', cell: (r: { name: string; size: number }) => String(r.size), right: true },
  ];

  it('aligns columns under their headers, right-aligns numbers and leaves no trailing spaces', () => {
    expect(
      formatTable(columns, [
        { name: 'a', size: 5 },
        { name: 'bbb', size: 1234 },
      ]),
    ).toBe('NAME  SIZE\na        5\nbbb   1234\n');
  });

  it('cuts long cells with an ellipsis and flattens control characters so a value cannot break the layout', () => {
    const text = formatTable(columns, [{ name: 'line\nbreak\u001b[31mred', size: 1 }]);
    expect(text.split('\n')).toHaveLength(3);
    expect(text).not.toContain('\u001b');
    expect(text.split('\n')[1]).toBe('line br…     1');
  });

  it('prints one record as aligned label: value lines', () => {
    expect(
      formatFields([
        ['run', 'r1'],
        ['environment', 'sandbox'],
      ]),
    ).toBe('run:          r1\nenvironment:  sandbox\n');
  });
});
