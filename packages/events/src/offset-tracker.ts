/**
 * Tracks one partition's records that were fetched but not finished, so that offsets are committed
 * only up to the lowest unfinished record while later records run in parallel. Offsets are begun in
 * increasing order (as fetched); a redelivered offset (after a rejoin) is recognised and skipped.
 */
export class OffsetTracker {
  private readonly order: number[] = [];
  private head = 0;
  private readonly finished = new Set<number>();
  private highest = -1;
  private committed = -1;

  /** Registers a fetched record; false when this offset was already seen here (running or done). */
  begin(offset: number): boolean {
    if (offset <= this.highest) return false;
    this.highest = offset;
    this.order.push(offset);
    return true;
  }

  /** Marks a record done; its offset becomes committable once every earlier record is done too. */
  finish(offset: number): void {
    this.finished.add(offset);
  }

  /** Records fetched here and not finished yet. */
  get unfinished(): number {
    return this.order.length - this.head - this.finished.size;
  }

  /**
   * The offset to commit (the next record a new owner must read), or undefined when it has not
   * moved since the last call to `markCommitted`.
   */
  committable(): number | undefined {
    while (this.head < this.order.length) {
      const offset = this.order[this.head];
      if (offset === undefined || !this.finished.has(offset)) break;
      this.finished.delete(offset);
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
    const next = this.head < this.order.length ? this.order[this.head] : this.highest + 1;
    if (next === undefined || next <= this.committed || this.highest < 0) return undefined;
    return next;
  }

  markCommitted(offset: number): void {
    if (offset > this.committed) this.committed = offset;
  }
}
