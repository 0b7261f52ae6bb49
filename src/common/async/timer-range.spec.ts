import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { isProductionTs, sourceFilesBelow } from '../../../test/support/source-files';
import { intervalOrNever, isNever, MAX_TIMER_MS, timeoutOrNever } from './timer-range';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(isNever.name, () => {
  it('is true beyond the longest delay a timer holds, and for a delay that is not a number', () => {
    expect(isNever(MAX_TIMER_MS)).toBe(false);
    expect(isNever(0)).toBe(false);
    expect(isNever(-5)).toBe(false);
    expect(isNever(MAX_TIMER_MS + 1)).toBe(true);
    expect(isNever(720 * 3_600_000)).toBe(true);
    expect(isNever(Infinity)).toBe(true);
    expect(isNever(NaN)).toBe(true);
  });
});

describe(timeoutOrNever.name, () => {
  it('fires once after the delay with its arguments; a delay already past fires at once', async () => {
    const calls: string[] = [];
    const timer = timeoutOrNever((word: string) => calls.push(word), 5, 'later');
    const past = timeoutOrNever((word: string) => calls.push(word), -1000, 'now');
    expect(timer).toBeDefined();
    expect(past).toBeDefined();
    await pause(30);
    expect(calls).toEqual(['now', 'later']);
  });

  it('arms nothing for a delay longer than a timer holds (Node would fire it after 1 ms)', async () => {
    let fired = 0;
    expect(timeoutOrNever(() => fired++, 720 * 3_600_000)).toBeUndefined();
    expect(timeoutOrNever(() => fired++, Infinity)).toBeUndefined();
    await pause(20);
    expect(fired).toBe(0);
  });
});

describe(intervalOrNever.name, () => {
  it('repeats every period', async () => {
    let fired = 0;
    const timer = intervalOrNever(() => fired++, 5);
    await pause(40);
    clearInterval(timer);
    expect(fired).toBeGreaterThanOrEqual(2);
  });

  it('arms nothing for a period longer than a timer holds: no repetition (Node would repeat every 1 ms)', async () => {
    let fired = 0;
    expect(intervalOrNever(() => fired++, MAX_TIMER_MS + 1)).toBeUndefined();
    await pause(20);
    expect(fired).toBe(0);
  });
});

/**
 * Read from the code with the TypeScript parser: a setTimeout or setInterval in src/ outside
 * timer-range.ts takes a fixed delay of our own, a SCREAMING_CASE constant or a number. Any other
 * delay (a setting, a request's deadline, an upstream's hint) goes through timeoutOrNever or
 * intervalOrNever, so a delay longer than a timer holds means never everywhere.
 */
describe('timers in src/', () => {
  const SRC = path.resolve(__dirname, '../..');
  const HELPER = path.join(__dirname, 'timer-range.ts');

  function unboundedTimers(file: string, text = fs.readFileSync(file, 'utf8')): string[] {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const found: string[] = [];
    const visit = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isIdentifier(node.expression) &&
        ['setTimeout', 'setInterval'].includes(node.expression.text)
      ) {
        const delay = node.arguments[1];
        const fixed =
          delay !== undefined &&
          (ts.isNumericLiteral(delay) || (ts.isIdentifier(delay) && /^[A-Z][A-Z0-9_]*$/.test(delay.text)));
        if (!fixed) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${path.relative(SRC, file)}:${line + 1}: ${node.getText().slice(0, 80)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  }

  it('take a fixed delay, or go through timer-range.ts', () => {
    const files = sourceFilesBelow(SRC, isProductionTs).filter((file) => file !== HELPER);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => unboundedTimers(file))).toEqual([]);
  });

  it('finds a timer fed by a setting', () => {
    const text = 'setInterval(tick, config.intervalMs);\nsetTimeout(done, GRACE_MS);\nsetTimeout(done, 5);\n';
    expect(unboundedTimers(path.join(SRC, 'bad.ts'), text)).toEqual(['bad.ts:1: setInterval(tick, config.intervalMs)']);
  });
});
