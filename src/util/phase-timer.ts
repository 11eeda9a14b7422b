/**
 * Times the steps of one operation for its log line: each call records the ms since the
 * previous call (or since the timer was made) under the step's name. Several timers may write
 * into one record (an open and the tail recovery inside it).
 */
export function phaseTimer(phases: Record<string, number> | undefined): (step: string) => void {
  let t = Date.now();
  return (step) => {
    const now = Date.now();
    if (phases !== undefined) phases[step] = now - t;
    t = now;
  };
}
