package io.arrowipc.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * The driver's inputs' metadata (footers, stream schemas), so that one query reads each input's
 * footer once, though inference, planning (footer blocks, the statistics summary) and count(*)
 * each need it, and later queries in this JVM read it again only if the input changed.
 *
 * <p>An entry is kept under the input's path with what tells its content apart, found without
 * reading it: for a local file, its size, modification time (ns) and file key (one stat); for a
 * Hadoop FileSystem URI, the size, modification time and ETag of the listing planning does
 * anyway; for an http(s) URL, the size, strong ETag or else Last-Modified of the first Range GET
 * (which a miss goes on reading from: a hit costs that one request, a miss nothing more). An
 * input whose version differs is read afresh and replaces its entry; an URL whose server sends
 * neither ETag nor Last-Modified is not kept, nor an input (without an ETag) modified in the last
 * 2 s, whose time could stay the same through a rewrite. At most MAX_ENTRIES entries and MAX_WEIGHT bytes
 * of metadata, the least recently used dropped first.
 *
 * <p>Driver only: tasks open their inputs themselves (IpcPartitionReader) and never look here.
 * One per JVM, shared by its sessions: a version names content, not a session.
 */
public final class FooterCache {
  static final int MAX_ENTRIES = 256;
  static final long MAX_WEIGHT = 64L << 20;

  /** A path's metadata and the version it was read at. */
  private static final class Entry {
    final String version;
    final IpcFile.Meta meta;

    Entry(String version, IpcFile.Meta meta) {
      this.version = version;
      this.meta = meta;
    }
  }

  private static final LinkedHashMap<String, Entry> ENTRIES = new LinkedHashMap<>(16, 0.75f, true);
  private static long weight;

  private FooterCache() {}

  /** Open a listed input for planning, its metadata read now or kept from before. */
  static IpcFile open(Inputs.Listed input) {
    String scheme = Source.scheme(input.path);
    if (scheme == null) return openLocal(input.path);
    if (Source.isHttp(scheme)) return openHttp(input.path);
    return openHadoop(input);
  }

  /** open() for an input planning has no listing of (a stream's admitted file). */
  static IpcFile open(String path) {
    return open(new Inputs.Listed(path, 0));
  }

  private static IpcFile openLocal(String path) {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(Paths.get(path), BasicFileAttributes.class);
    } catch (IOException | RuntimeException e) {
      return IpcFile.read(Source.Local.open(path));          // which says what is wrong
    }
    long modifiedMs = a.lastModifiedTime().toMillis();
    if (!settled(modifiedMs)) return IpcFile.read(Source.Local.open(path));
    String version = a.size() + " bytes, modified " + a.lastModifiedTime().to(TimeUnit.NANOSECONDS)
        + " ns, key " + a.fileKey();
    return cached(path, version, a.size(), () -> Source.Local.open(path));
  }

  private static IpcFile openHadoop(Inputs.Listed input) {
    String path = input.path;
    Configuration conf = HadoopConf.get();
    long length = input.length;
    long modified = input.modified;
    String etag = input.etag;
    if (length < 0) {                 // not listed: one status call, as opening would make
      try {
        FileSystem fs = Source.hadoopFileSystem(path, conf);
        Inputs.Listed st = Inputs.Listed.of(fs.getFileStatus(new org.apache.hadoop.fs.Path(path)));
        length = st.length;
        modified = st.modified;
        etag = st.etag;
      } catch (IOException | IllegalArgumentException e) {
        return IpcFile.read(HadoopSource.open(path, conf));  // which says what is wrong
      }
    }
    long size = length;
    Supplier<Source> opener = () -> HadoopSource.open(path, conf, size);
    if (etag == null && (modified <= 0 || !settled(modified))) {
      return IpcFile.read(opener.get());          // nothing that tells versions apart for sure
    }
    return cached(path, size + " bytes, modified " + modified + " ms, etag " + etag, size, opener);
  }

  private static IpcFile openHttp(String url) {
    HttpSource source = new HttpSource(url);
    String version = source.version();
    if (version == null) return IpcFile.read(source);
    version = source.size() + " bytes, " + version;
    IpcFile.Meta meta = get(url, version);
    if (meta != null) return new IpcFile(url, meta, source, null);  // its first answer serves reads
    IpcFile f = IpcFile.read(source);
    put(url, version, f.meta);
    return f;
  }

  /**
   * Whether a modification time (ms since the epoch) is old enough to tell versions apart: a file
   * rewritten at the same size within one tick of its file system's clock (4 ms on ext4, 1 s on
   * ext3 or HFS+, 2 s on FAT) keeps its time, so a file modified in the last 2 s is not kept (as
   * an http Last-Modified must be HttpSource.MODIFIED_SETTLED older than the answer).
   */
  static boolean settled(long modifiedMs) {
    return System.currentTimeMillis() - modifiedMs >= HttpSource.MODIFIED_SETTLED.toMillis();
  }

  /** The input at `path` from its kept metadata if `version` matches, else read and kept. */
  private static IpcFile cached(String path, String version, long size, Supplier<Source> opener) {
    IpcFile.Meta meta = get(path, version);
    if (meta != null) return new IpcFile(path, meta, null, opener);
    IpcFile f = IpcFile.read(opener.get());
    if (f.size == size) put(path, version, f.meta);        // else it changed since: not kept
    return f;
  }

  private static synchronized IpcFile.Meta get(String path, String version) {
    Entry e = ENTRIES.get(path);
    return e != null && e.version.equals(version) ? e.meta : null;
  }

  private static synchronized void put(String path, String version, IpcFile.Meta meta) {
    Entry old = ENTRIES.remove(path);
    if (old != null) weight -= old.meta.weight;
    if (meta.weight > MAX_WEIGHT) return;
    ENTRIES.put(path, new Entry(version, meta));
    weight += meta.weight;
    Iterator<Entry> eldest = ENTRIES.values().iterator();
    while ((ENTRIES.size() > MAX_ENTRIES || weight > MAX_WEIGHT) && eldest.hasNext()) {
      weight -= eldest.next().meta.weight;
      eldest.remove();
    }
  }

  /** Inputs whose metadata is kept (for tests). */
  public static synchronized int entries() {
    return ENTRIES.size();
  }

  /** Forget every input's metadata: the next query reads each footer afresh. */
  public static synchronized void clear() {
    ENTRIES.clear();
    weight = 0;
  }
}
