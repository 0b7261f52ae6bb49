import { FrameQueue } from './provider-a.frame-queue';

describe(FrameQueue.name, () => {
  it('hands pushed items to a waiting reader, then buffered ones, then the end', async () => {
    const queue = new FrameQueue<number>();
    const iterator = queue[Symbol.asyncIterator]();
    const waiting = iterator.next();
    queue.push(1);
    queue.push(2);
    queue.end();
    queue.push(3);
    expect(await waiting).toEqual({ value: 1, done: false });
    expect(await iterator.next()).toEqual({ value: 2, done: false });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('pauses the source above the high-water mark and resumes once half drained', async () => {
    const pressure: boolean[] = [];
    const queue = new FrameQueue<number>((paused) => pressure.push(paused), 4);
    for (let index = 0; index < 6; index++) queue.push(index);
    expect(pressure).toEqual([true]);
    const iterator = queue[Symbol.asyncIterator]();
    for (let index = 0; index < 5; index++) await iterator.next();
    expect(pressure).toEqual([true, false]);
  });

  it('rejects pending and later reads at once on failure, and calls onReturn when the reader stops', async () => {
    let returned = false;
    const queue = new FrameQueue<number>(undefined, 64, () => (returned = true));
    const iterator = queue[Symbol.asyncIterator]();
    const waiting = iterator.next();
    queue.fail(new Error('aborted'));
    await expect(waiting).rejects.toThrow('aborted');
    await expect(iterator.next()).rejects.toThrow('aborted');
    await iterator.return!();
    expect(returned).toBe(true);
  });

  it('listens without a promise: at once for a buffered item, else when one comes; unshift puts one back in front', () => {
    const queue = new FrameQueue<number>();
    const seen: unknown[] = [];
    const arrived = (next: IteratorResult<number>) => seen.push(next);
    const failed = (error: unknown) => seen.push(error);
    queue.push(1);
    queue.listen(arrived, failed);
    queue.listen(arrived, failed);
    queue.push(2);
    expect(seen).toEqual([
      { value: 1, done: false },
      { value: 2, done: false },
    ]);
    queue.push(3);
    queue.unshift(0);
    expect([queue.poll(), queue.poll(), queue.poll()]).toEqual([0, 3, undefined]);
    const failure = new Error('aborted');
    queue.listen(arrived, failed);
    queue.fail(failure);
    expect(seen[2]).toBe(failure);
  });
});
