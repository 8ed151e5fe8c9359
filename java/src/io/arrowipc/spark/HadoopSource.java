package io.arrowipc.spark;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * An input on a Hadoop FileSystem (file:, hdfs:, s3a: ...): positioned reads through
 * FSDataInputStream.readFully(position, ...), which leave the stream's own position alone and
 * let object-store connectors issue one ranged GET per read.
 */
final class HadoopSource implements Source {
  /** Bytes copied per positioned read into a direct buffer (streams rarely read into those). */
  private static final int CHUNK = 1 << 20;
  private final String name;
  private final FSDataInputStream in;
  private final long size;
  private final boolean byteBufferReads;
  private byte[] chunk;

  private HadoopSource(String name, FSDataInputStream in, long size) {
    this.name = name;
    this.in = in;
    this.size = size;
    this.byteBufferReads = in.hasCapability(StreamCapabilities.PREADBYTEBUFFER);
  }

  static HadoopSource open(String location, Configuration conf) {
    return open(location, conf, -1);
  }

  /**
   * Open `location`, whose size the driver's listing gave (`knownSize`, saving a status call:
   * a request on object stores), or -1 to ask the file system.
   */
  static HadoopSource open(String location, Configuration conf, long knownSize) {
    FileSystem fs = Source.hadoopFileSystem(location, conf);
    Path p = new Path(location);
    try {
      // file: checks .crc sidecars; without one its positioned reads only cost more (a new
      // stream each), so read the raw file system
      if (fs instanceof ChecksumFileSystem
          && !fs.exists(((ChecksumFileSystem) fs).getChecksumFile(p))) {
        fs = ((ChecksumFileSystem) fs).getRawFileSystem();
      }
      long size = knownSize >= 0 ? knownSize : fs.getFileStatus(p).getLen();
      return new HadoopSource(location, fs.open(p), size);
    } catch (FileNotFoundException e) {
      throw new IpcException("arrowipc: cannot read " + location + ": no such file", e);
    } catch (IOException e) {
      throw new IpcException("arrowipc: cannot read " + location + ": " + e, e);
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void readFully(ByteBuffer dst, long offset) throws IOException {
    int n = dst.remaining();
    checkRange(offset, n);
    try {
      if (dst.hasArray()) {
        in.readFully(offset, dst.array(), dst.arrayOffset() + dst.position(), n);
        dst.position(dst.limit());
        return;
      }
      if (byteBufferReads) {                    // straight into the (direct) buffer
        in.readFully(offset, dst);
        return;
      }
      if (chunk == null) chunk = new byte[(int) Math.min(CHUNK, Math.max(n, 8192))];
      long at = offset;
      while (dst.hasRemaining()) {
        int k = Math.min(dst.remaining(), chunk.length);
        in.readFully(at, chunk, 0, k);
        dst.put(chunk, 0, k);
        at += k;
      }
    } catch (java.io.EOFException e) {
      throw new IpcException("arrowipc: " + name + " ended before byte " + (offset + n)
          + " (reading " + n + " bytes at byte " + offset + "); it may be truncated", e);
    }
  }

  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException ignored) {
      // a read-only stream: nothing is lost
    }
  }
}
