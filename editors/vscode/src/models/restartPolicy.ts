// When a crashed server is restarted: at most `maxRestarts` times within `windowMs`, then the user decides.

export interface RestartBound {
  maxRestarts: number;
  windowMs: number;
}

/** 3 restarts in 3 minutes, as the issue asks and as VS Code's own default error handler does (4 in 3 minutes). */
export const DEFAULT_RESTART_BOUND: RestartBound = { maxRestarts: 3, windowMs: 3 * 60 * 1000 };

/** Counts crashes in a sliding window; `now` is injectable so the bound is tested without waiting. */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    readonly bound: RestartBound = DEFAULT_RESTART_BOUND,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a crash; true when the server should be restarted automatically. */
  crashed(): boolean {
    const time = this.now();
    this.crashes = this.crashes.filter((at) => time - at < this.bound.windowMs);
    this.crashes.push(time);
    return this.crashes.length <= this.bound.maxRestarts;
  }

  /** Crashes within the window, this one included. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  /** A user's restart starts the count again. */
  reset(): void {
    this.crashes = [];
  }

  describeBound(): string {
    const minutes = Math.round(this.bound.windowMs / 60000);
    return `${this.bound.maxRestarts} times in ${minutes} minute${minutes === 1 ? "" : "s"}`;
  }
}
