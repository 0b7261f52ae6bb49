import { closingEvents } from './closing-events';

function turn() {
  const log: string[] = [];
  async function* events() {
    try {
      yield 1;
      yield 2;
    } finally {
      log.push('generator finally');
    }
  }
  const iterable = closingEvents(events(), () => {
    log.push('cleanup');
  });
  return { log, iterator: iterable[Symbol.asyncIterator]() };
}

describe(closingEvents.name, () => {
  it('cleans up when return() comes before any next() (a plain generator would skip its finally)', async () => {
    const { log, iterator } = turn();
    await iterator.return!();
    expect(log).toEqual(['cleanup']);
  });

  it("leaves cleanup to the generator's own finally once it started, and runs it once", async () => {
    const { log, iterator } = turn();
    expect(await iterator.next()).toEqual({ value: 1, done: false });
    await iterator.return!();
    await iterator.return!();
    expect(log).toEqual(['generator finally']);
  });

  it('passes every event through and ends like the generator', async () => {
    const { log, iterator } = turn();
    const values: number[] = [];
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) values.push(step.value);
    expect(values).toEqual([1, 2]);
    expect(log).toEqual(['generator finally']);
  });
});
