package io.arrowipc.spark;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of record batch bodies this JVM has read, and batches skipped by statistics: what column
 * pruning and batch skipping save, observable from tests and benchmarks (local mode shares the JVM);
 * and at planning (the driver), files skipped or counted from their footer's statistics summary.
 */
public final class ReadStats {
  private static final AtomicLong BODY_BYTES = new AtomicLong();
  private static final AtomicLong BATCHES_SKIPPED = new AtomicLong();
  private static final AtomicLong BATCHES_READ = new AtomicLong();
  private static final AtomicLong FILES_SKIPPED = new AtomicLong();
  private static final AtomicLong FILES_OPENED = new AtomicLong();
  private static final AtomicLong FILES_COUNTED_FROM_FOOTER = new AtomicLong();
  private static final AtomicLong REMOTE_REQUESTS = new AtomicLong();
  private static final AtomicLong REMOTE_BYTES = new AtomicLong();

  private ReadStats() {}

  static void add(long bytes) {
    BODY_BYTES.addAndGet(bytes);
  }

  static void batch(boolean skipped) {
    (skipped ? BATCHES_SKIPPED : BATCHES_READ).incrementAndGet();
  }

  static void fileOpened() {
    FILES_OPENED.incrementAndGet();
  }

  static void fileSkipped() {
    FILES_SKIPPED.incrementAndGet();
  }

  static void fileCountedFromFooter() {
    FILES_COUNTED_FROM_FOOTER.incrementAndGet();
  }

  /** One request to a remote input (HttpSource) that brought `bytes`. */
  static void remote(long bytes) {
    REMOTE_REQUESTS.incrementAndGet();
    REMOTE_BYTES.addAndGet(bytes);
  }

  /** Requests sent to http(s) inputs since the last reset (metadata and bodies). */
  public static long remoteRequests() {
    return REMOTE_REQUESTS.get();
  }

  /** Bytes those requests brought. */
  public static long remoteBytes() {
    return REMOTE_BYTES.get();
  }

  /** Body bytes read since the last reset. */
  public static long bodyBytesRead() {
    return BODY_BYTES.get();
  }

  public static long batchesSkipped() {
    return BATCHES_SKIPPED.get();
  }

  public static long batchesRead() {
    return BATCHES_READ.get();
  }

  /**
   * Inputs read tasks opened (their footer, and then the batches they need): what partition
   * pruning saves. Planning's footer reads on the driver are not counted.
   */
  public static long filesOpened() {
    return FILES_OPENED.get();
  }

  /** Files the footer's statistics summary ruled out at planning (none of their batches read). */
  public static long filesSkipped() {
    return FILES_SKIPPED.get();
  }

  /** Files whose rows a pushed-down count(*) took from the footer's summary alone. */
  public static long filesCountedFromFooter() {
    return FILES_COUNTED_FROM_FOOTER.get();
  }

  public static void reset() {
    FILES_SKIPPED.set(0);
    FILES_OPENED.set(0);
    FILES_COUNTED_FROM_FOOTER.set(0);
    BODY_BYTES.set(0);
    BATCHES_SKIPPED.set(0);
    BATCHES_READ.set(0);
    REMOTE_REQUESTS.set(0);
    REMOTE_BYTES.set(0);
  }
}
