package io.arrowipc.spark;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of record batch bodies this JVM has read, and batches skipped by statistics: what column
 * pruning and batch skipping save, observable from tests and benchmarks (local mode shares the JVM).
 */
public final class ReadStats {
  private static final AtomicLong BODY_BYTES = new AtomicLong();
  private static final AtomicLong BATCHES_SKIPPED = new AtomicLong();
  private static final AtomicLong BATCHES_READ = new AtomicLong();
  private static final AtomicLong REMOTE_REQUESTS = new AtomicLong();
  private static final AtomicLong REMOTE_BYTES = new AtomicLong();

  private ReadStats() {}

  static void add(long bytes) {
    BODY_BYTES.addAndGet(bytes);
  }

  static void batch(boolean skipped) {
    (skipped ? BATCHES_SKIPPED : BATCHES_READ).incrementAndGet();
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

  public static void reset() {
    BODY_BYTES.set(0);
    BATCHES_SKIPPED.set(0);
    BATCHES_READ.set(0);
    REMOTE_REQUESTS.set(0);
    REMOTE_BYTES.set(0);
  }
}
