/**
 * @internal The timeouts of running tool calls, on one Node timer.
 *
 * A call that starts something asynchronous needs a timeout, and nearly every call ends long
 * before it. A Node timer per call (setTimeout, then clearTimeout) was a seventh of the toolkit's
 * own cost for such a call: timer lists, a priority queue, a native call to read the loop's clock.
 * Here a call adds its deadline to a heap and, when it ends, only marks it cancelled; one timer
 * stands for the earliest deadline, and fires at most once per deadline that was due (a deadline
 * cancelled meanwhile just moves the timer on to the next). The timer keeps the process alive
 * exactly while a call is waiting on a deadline, as a timer per call did.
 */
export interface Deadline {
  /** When it is due, in `performance.now()` milliseconds (monotonic, like Node's timers). */
  readonly at: number;
  /** Called when it is due; undefined once it fired or was cancelled. */
  fire: (() => void) | undefined;
}

const heap: Deadline[] = [];
let live = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires (Infinity: no timer). */
let timerAt = Infinity;
/**
 * The timer functions the timer was set with. Read from globalThis on each use, so that fake
 * timers (jest's, sinon's) installed after this module loaded drive deadlines too; a deadline
 * added after they were installed or removed moves the timer to the functions now in place.
 */
let armedWith: typeof setTimeout | undefined;
let clearWith: typeof clearTimeout | undefined;

/** Call `fire` in `ms` milliseconds unless {@link cancelDeadline} comes first. */
export function addDeadline(ms: number, fire: () => void): Deadline {
  const deadline: Deadline = { at: performance.now() + ms, fire };
  push(deadline);
  live++;
  if (globalThis.setTimeout !== armedWith) arm(heap[0]!.at);
  else if (deadline.at < timerAt) arm(deadline.at);
  else if (live === 1) timer?.ref?.();
  return deadline;
}

/** The call ended before its deadline: forget it (at no cost beyond a few comparisons). */
export function cancelDeadline(deadline: Deadline): void {
  if (deadline.fire === undefined) return;
  deadline.fire = undefined;
  live--;
  // Drop cancelled deadlines from the top; a long-lived call at the top can leave many below
  // it, so rebuild the heap when they outnumber the live ones by far.
  while (heap.length > 0 && heap[0]!.fire === undefined) pop();
  if (heap.length > 64 && heap.length > 4 * live) compact();
  // Nothing waits on a deadline any more: the timer must not keep the process alive.
  if (live === 0) timer?.unref?.();
}

/** @internal For tests: how many deadlines are kept, and how many of them are live. */
export function deadlineStats(): { kept: number; live: number; armed: boolean } {
  return { kept: heap.length, live, armed: timer !== undefined };
}

function arm(at: number): void {
  if (timer !== undefined) clearWith?.(timer);
  armedWith = globalThis.setTimeout;
  clearWith = globalThis.clearTimeout;
  timerAt = at;
  timer = armedWith(onTimer, Math.max(0, at - performance.now()));
  if (live === 0) timer.unref?.();
}

function onTimer(): void {
  timer = undefined;
  timerAt = Infinity;
  const now = performance.now();
  while (heap.length > 0 && (heap[0]!.fire === undefined || heap[0]!.at <= now)) {
    const due = pop();
    const fire = due.fire;
    if (fire === undefined) continue;
    due.fire = undefined;
    live--;
    try {
      fire();
    } catch {
      // A call's timeout handler only records the timeout; nothing here can report a throw.
    }
  }
  // The next live deadline (timers can fire a little early by the wall clock: re-arm for it).
  if (heap.length > 0) arm(heap[0]!.at);
}

function push(deadline: Deadline): void {
  heap.push(deadline);
  let index = heap.length - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (heap[parent]!.at <= deadline.at) break;
    heap[index] = heap[parent]!;
    index = parent;
  }
  heap[index] = deadline;
}

function pop(): Deadline {
  const top = heap[0]!;
  const last = heap.pop()!;
  if (heap.length > 0) {
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
      if (heap[child]!.at >= last.at) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }
  return top;
}

function compact(): void {
  const kept = heap.filter((deadline) => deadline.fire !== undefined);
  heap.length = 0;
  for (const deadline of kept) push(deadline);
}
