package io.arrowipc.spark;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * Positioned reads from one input, wherever it lives: a local path (a FileChannel), a URI of any
 * scheme Hadoop has a FileSystem for on Spark's classpath (file:, hdfs:, s3a: with hadoop-aws,
 * ...) or an http(s):// URL read with Range requests. IpcFile reads through it, so the readers
 * fetch only the footer, message headers and the wanted columns' buffers from any of them.
 */
interface Source extends Closeable {
  /** The input as the user named it (local paths made absolute): what errors print. */
  String name();

  long size();

  /** Fill `dst` from its position to its limit with the input's bytes from `offset`. */
  void readFully(ByteBuffer dst, long offset) throws IOException;

  /**
   * Fill each buffer with the bytes at its offset. Remote sources send the requests together;
   * the default reads them one after another.
   */
  default void readRanges(List<ByteBuffer> dsts, long[] offsets) throws IOException {
    for (int i = 0; i < offsets.length; i++) readFully(dsts.get(i), offsets[i]);
  }

  /**
   * A hint: [offset, offset + length) is about to be read in small pieces (a message's prefix,
   * then its metadata). Sources where each read costs a request fetch it at once.
   */
  default void willRead(long offset, long length) throws IOException {}

  @Override
  void close();

  /**
   * Refuse [offset, offset + n) unless it lies inside the input (written so it cannot overflow):
   * a truncated input surfaces here, naming it, instead of as a short read.
   */
  default void checkRange(long offset, long n) {
    if (offset < 0 || n < 0 || offset > size() || n > size() - offset) {
      throw new IpcException("arrowipc: " + name() + " ended at byte " + size() + " while " + n
          + " bytes at byte " + offset + " were expected; it may be truncated");
    }
  }

  /**
   * scheme:// at the start of a location (two letters at least, so "C:\\data" is a path), or
   * Hadoop's file:/path spelling.
   */
  Pattern SCHEME = Pattern.compile("^(?:([a-zA-Z][a-zA-Z0-9+.-]+)://|(file):)", Pattern.CASE_INSENSITIVE);

  /** The location's URI scheme in lower case, or null for a plain path. */
  static String scheme(String location) {
    Matcher m = SCHEME.matcher(location);
    if (!m.find()) return null;
    return (m.group(1) != null ? m.group(1) : m.group(2)).toLowerCase(Locale.ROOT);
  }

  static boolean isHttp(String scheme) {
    return "http".equals(scheme) || "https".equals(scheme);
  }

  /**
   * The Hadoop FileSystem for a location with a scheme, or an IpcException naming the scheme and
   * what to use instead when Spark's classpath has none (s3: without a connector, gs:, az: ...).
   */
  static FileSystem hadoopFileSystem(String location, Configuration conf) {
    String scheme = scheme(location);
    try {
      FileSystem.getFileSystemClass(scheme, conf);
    } catch (IOException | RuntimeException e) {
      // none configured, or one configured whose class is missing (gs: names the GCS connector)
      throw unsupported(location, scheme);
    }
    try {
      return new org.apache.hadoop.fs.Path(location).getFileSystem(conf);
    } catch (IOException | IllegalArgumentException e) {
      throw new IpcException("arrowipc: cannot open the file system of " + location + ": " + e, e);
    }
  }

  static IpcException unsupported(String location, String scheme) {
    String instead;
    switch (scheme) {
      case "s3": case "s3n":
        instead = "use " + location.replaceFirst("^[a-zA-Z0-9]+:", "s3a:") + " with the S3A "
            + "connector on Spark's classpath (--packages org.apache.hadoop:hadoop-aws:<Spark's Hadoop "
            + "version>)";
        break;
      case "gs":
        instead = "put the Cloud Storage connector (gcs-connector) on Spark's classpath";
        break;
      case "az": case "abfs": case "abfss": case "wasb": case "wasbs": case "adl":
        instead = "use abfs(s):// with hadoop-azure on Spark's classpath";
        break;
      default:
        instead = "put a Hadoop FileSystem for '" + scheme + "' on Spark's classpath";
    }
    return new IpcException("arrowipc: the JVM data source cannot open " + location + ": Spark's "
        + "classpath has no Hadoop FileSystem for the scheme '" + scheme + "'; " + instead
        + ", or read it with the Python data source, format(\"arrowipc_python\") (registered beside "
        + "the jar; it opens any fsspec URL)");
  }

  /** Open `location`; `conf` (null: the driver's) configures Hadoop file systems. */
  static Source open(String location, Configuration conf) {
    String scheme = scheme(location);
    if (scheme == null) return Local.open(location);
    if (isHttp(scheme)) return new HttpSource(location);
    return HadoopSource.open(location, conf == null ? HadoopConf.get() : conf);
  }

  /** A local file through a FileChannel. */
  final class Local implements Source {
    private final String path;
    private final FileChannel channel;
    private final long size;

    private Local(String path, FileChannel channel) throws IOException {
      this.path = path;
      this.channel = channel;
      this.size = channel.size();
    }

    static Local open(String path) {
      FileChannel ch = null;
      try {
        ch = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
        return new Local(path, ch);
      } catch (IOException e) {
        if (ch != null) {
          try {
            ch.close();
          } catch (IOException ignored) {
            // already failing
          }
        }
        throw new IpcException("arrowipc: cannot read " + path + ": " + e.getMessage(), e);
      }
    }

    @Override
    public String name() {
      return path;
    }

    @Override
    public long size() {
      return size;
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
      long at = offset;
      while (dst.hasRemaining()) {
        int n = channel.read(dst, at);
        if (n < 0) {
          throw new IpcException("arrowipc: " + path + " ended at byte " + at + " while "
              + dst.remaining() + " more bytes were expected");
        }
        at += n;
      }
    }

    @Override
    public void close() {
      try {
        channel.close();
      } catch (IOException ignored) {
        // closing a read-only channel: nothing is lost
      }
    }
  }
}
