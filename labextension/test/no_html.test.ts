import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..', 'src');

describe('rendering policy', () => {
  it('never parses strings as HTML (run and metric names are user-provided)', () => {
    const offenders = readdirSync(SRC)
      .filter(f => f.endsWith('.ts'))
      .flatMap(f =>
        readFileSync(join(SRC, f), 'utf-8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
      )
      .filter(({ line }) =>
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|dangerouslySetInnerHTML/.test(line)
      )
      .filter(({ line }) => !line.trim().startsWith('*') && !line.trim().startsWith('//'));
    expect(offenders).toEqual([]);
  });
});
