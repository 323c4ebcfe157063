/** Time source; tests give a fixed or stepping clock instead of mocking Date. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
