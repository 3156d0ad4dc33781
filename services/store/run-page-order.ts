// A run's pages written in the order they were sent, when the gateway sends a run's next page before the
// answer for the one before it (docs/decisions/0052-a-run-s-next-page-sent-before-the-answer.md). Each
// ApplyBatch or ApplyBatches call registers as the latest of its runs when it arrives; a page that names
// the cursor it follows waits for its run's call registered before its own, while its own page decodes.
// This orders the pages one store process receives; across replicas the stored cursor decides
// (PREDECESSOR_NOT_APPLIED), so the order here saves a refusal, never decides correctness.

export interface RunPages {
  /** What the call's following pages wait for: the calls of their runs registered before this one. */
  before: Promise<void>[];
  /** The call is answered: later calls of its runs may go on. */
  done(): void;
}

export class RunPageOrder {
  private readonly latest = new Map<string, Promise<void>>();

  /** Registers a call's runs, synchronously on its arrival; `following` are those of its pages that follow a cursor. */
  enter(runIds: readonly string[], following: ReadonlySet<string>): RunPages {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const runs = new Set(runIds);
    const before: Promise<void>[] = [];
    for (const id of runs) {
      const previous = this.latest.get(id);
      if (previous && following.has(id)) before.push(previous);
      this.latest.set(id, mine);
    }
    return {
      before,
      done: () => {
        release();
        for (const id of runs) if (this.latest.get(id) === mine) this.latest.delete(id);
      },
    };
  }

  /** Runs with a call in flight (a gauge, and the tests' check that nothing is kept). */
  get size(): number {
    return this.latest.size;
  }
}
