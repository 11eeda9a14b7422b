/**
 * How often each program's event-loop delay histogram samples (ms; prom-client's
 * `eventLoopMonitoringPrecision`, `monitorEventLoopDelay`'s resolution). Each sample is a timer
 * that wakes the main thread: prom-client's default of 10 ms was 104 of an idle node's 106
 * wake-ups a second. A stall shows in the sample after it as its part past that sample's due
 * time, so the period is also the shortest stall the histogram is sure to see: 20 ms keeps the
 * stalls that matter to a p99 of a few tens of milliseconds, at half the wake-ups.
 */
export const EVENT_LOOP_SAMPLE_MS = 20;
