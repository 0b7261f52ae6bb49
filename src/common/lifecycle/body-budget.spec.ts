import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { BodyBudget } from './body-budget';
import { DrainService } from './drain.service';

/** A response as the budget and the drain see it: an emitter whose `closed` turns true as it emits 'close'. */
function fakeResponse(): ServerResponse {
  const response = new EventEmitter() as EventEmitter & { closed: boolean };
  response.closed = false;
  response.prependListener('close', () => (response.closed = true));
  return response as unknown as ServerResponse;
}

describe(BodyBudget.name, () => {
  it('holds a body up to the total it reached, and refuses what does not fit without holding any of it', () => {
    const budget = new BodyBudget(100);
    const [first, second] = [fakeResponse(), fakeResponse()];
    expect(budget.holdUpTo(first, 60)).toBe(true);
    // A total already reached holds nothing more.
    expect(budget.holdUpTo(first, 30)).toBe(true);
    expect(budget.heldBytes).toBe(60);
    expect(budget.holdUpTo(second, 41)).toBe(false);
    expect(budget.heldBytes).toBe(60);
    // A body counted as it arrives holds what it grew by.
    expect(budget.holdUpTo(second, 25)).toBe(true);
    expect(budget.holdUpTo(second, 40)).toBe(true);
    expect(budget.heldBytes).toBe(100);
    expect(budget.holdUpTo(second, 41)).toBe(false);
    expect(budget.heldBytes).toBe(100);
  });

  it('says whether a declared length fits in what is left, holding none of it', () => {
    const budget = new BodyBudget(100);
    budget.holdUpTo(fakeResponse(), 60);
    expect([budget.hasRoomFor(40), budget.hasRoomFor(41)]).toEqual([true, false]);
    expect(budget.heldBytes).toBe(60);
  });

  it("gives a request's bytes back once, when its response closes, whatever held them", () => {
    const drain = new DrainService();
    const budget = new BodyBudget(100);
    const [whole, arriving, none] = [fakeResponse(), fakeResponse(), fakeResponse()];
    for (const response of [whole, arriving, none]) drain.track(response);
    budget.holdUpTo(whole, 50);
    budget.holdUpTo(arriving, 10);
    budget.holdUpTo(arriving, 30);
    whole.emit('close');
    expect(budget.heldBytes).toBe(30);
    BodyBudget.releaseHeldBy(whole);
    expect(budget.heldBytes).toBe(30);
    arriving.emit('close');
    none.emit('close');
    expect([budget.heldBytes, drain.inFlightCount]).toEqual([0, 0]);
  });

  it('holds nothing for a response that has closed: what still arrives of its body is never given back', () => {
    const drain = new DrainService();
    const budget = new BodyBudget(100);
    const response = fakeResponse();
    drain.track(response);
    budget.holdUpTo(response, 10);
    response.emit('close');
    expect(budget.holdUpTo(response, 90)).toBe(true);
    expect(budget.heldBytes).toBe(0);
  });
});
