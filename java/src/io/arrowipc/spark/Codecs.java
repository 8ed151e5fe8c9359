package io.arrowipc.spark;

import java.nio.ByteBuffer;

import com.github.luben.zstd.Zstd;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.spark.unsafe.Platform;

/**
 * The two body codecs of the IPC format, over direct memory, with the codec jars Spark ships.
 *
 * <p>ZSTD frames go to zstd-jni as they are. LZ4 frames are parsed here: independent blocks go to
 * lz4-java's native block decoder; linked blocks (the default of the LZ4 frame library, so of
 * pyarrow and arrowipc) may copy from the blocks before them, which no block decoder of lz4-java
 * allows, so they are decoded by {@link #lz4Block} with the whole output as history.
 */
final class Codecs {
  static final int LZ4_FRAME = 0;
  static final int ZSTD = 1;
  /** The most output one input byte can produce (a fact of each format), plus frame slack. */
  static final long[] MAX_RATIO = {256, 32768};
  static final long[] MAX_EXTRA = {1 << 16, 1 << 17};

  private static final int LZ4_MAGIC = 0x184D2204;
  private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();
  private static final LZ4SafeDecompressor LZ4_BLOCK = LZ4.safeDecompressor();
  /** The frame descriptor this writer uses (version 1, independent blocks, 4 MiB) and its checksum. */
  private static final byte[] LZ4_DESCRIPTOR = {0x60, 0x70};
  private static final byte LZ4_HEADER_CHECKSUM = (byte) (XXHashFactory.fastestInstance().hash32()
      .hash(LZ4_DESCRIPTOR, 0, 2, 0) >>> 8);

  private Codecs() {}

  static String name(int codec) {
    return codec == LZ4_FRAME ? "LZ4_FRAME" : "ZSTD";
  }

  /** Decompress src[srcOff, srcOff+srcLen) into exactly dstLen bytes at dst[dstOff]; returns an error or null. */
  static String decompress(int codec, ByteBuffer src, int srcOff, int srcLen, ByteBuffer dst,
                           int dstOff, int dstLen) {
    if (codec == ZSTD) {
      long n;
      try {
        n = Zstd.decompressDirectByteBuffer(dst, dstOff, dstLen, src, srcOff, srcLen);
      } catch (RuntimeException e) {
        return "corrupt ZSTD frame: " + e.getMessage();
      }
      if (n != dstLen) {
        return "ZSTD data decompressed to " + n + " bytes but its prefix states " + dstLen;
      }
      return null;
    }
    return lz4Frame(src, srcOff, srcLen, dst, dstOff, dstLen);
  }

  private static String lz4Frame(ByteBuffer src, int off, int len, ByteBuffer dst, int dstOff,
                                 int dstLen) {
    long srcAddr = Memory.address(src);
    long dstAddr = Memory.address(dst);
    int end = off + len;
    int out = 0;
    int pos = off;
    while (pos < end) {
      if (end - pos < 7) return "LZ4 frame header is truncated at byte " + (pos - off);
      int magic = Platform.getInt(null, srcAddr + pos);
      if ((magic & 0xFFFFFFF0) == 0x184D2A50) {         // a skippable frame
        if (end - pos < 8) return "LZ4 skippable frame is truncated";
        long skip = Integer.toUnsignedLong(Platform.getInt(null, srcAddr + pos + 4));
        if (skip > end - pos - 8) return "LZ4 skippable frame is truncated";
        pos += 8 + (int) skip;
        continue;
      }
      if (magic != LZ4_MAGIC) {
        return "expected the LZ4 frame magic at byte " + (pos - off) + ", found 0x"
            + Integer.toHexString(magic);
      }
      int flg = Platform.getByte(null, srcAddr + pos + 4) & 0xFF;
      if ((flg >> 6) != 1) return "LZ4 frame version " + (flg >> 6) + " is not 1";
      boolean independent = (flg & 0x20) != 0;
      boolean blockChecksum = (flg & 0x10) != 0;
      boolean contentSize = (flg & 0x08) != 0;
      boolean contentChecksum = (flg & 0x04) != 0;
      boolean dictId = (flg & 0x01) != 0;
      if (dictId) return "LZ4 frames with a dictionary are not supported";
      int header = 7 + (contentSize ? 8 : 0);
      if (end - pos < header) return "LZ4 frame header is truncated";
      pos += header;
      int frameStart = out;
      while (true) {
        if (end - pos < 4) return "LZ4 frame is truncated (no end mark)";
        int size = Platform.getInt(null, srcAddr + pos);
        pos += 4;
        if (size == 0) break;
        boolean raw = size < 0;
        size &= 0x7FFFFFFF;
        if (size > end - pos) return "LZ4 block of " + size + " bytes runs past the frame";
        if (raw) {
          if (size > dstLen - out) return "LZ4 frame decompresses to more than " + dstLen + " bytes";
          Platform.copyMemory(null, srcAddr + pos, null, dstAddr + dstOff + out, size);
          out += size;
        } else if (independent) {
          int n;
          try {
            n = LZ4_BLOCK.decompress(src, pos, size, dst, dstOff + out, dstLen - out);
          } catch (RuntimeException e) {
            return "corrupt LZ4 block: " + e.getMessage();
          }
          out += n;
        } else {
          int n = lz4Block(srcAddr + pos, size, dstAddr + dstOff + frameStart,
                           out - frameStart, dstLen - frameStart);
          if (n < 0) return "corrupt LZ4 block (or more than " + dstLen + " bytes of output)";
          out = frameStart + n;
        }
        pos += size + (blockChecksum ? 4 : 0);
      }
      if (contentChecksum) pos += 4;
      if (pos > end) return "LZ4 frame is truncated (checksum)";
    }
    if (out != dstLen) {
      return "LZ4 frame decompressed to " + out + " bytes but its prefix states " + dstLen;
    }
    return null;
  }

  /**
   * One LZ4 block appended at out[outPos]; matches may reach back to out[0] (linked blocks).
   * Returns the new output length, or -1 for corrupt input or output beyond outCap.
   */
  static int lz4Block(long in, int inLen, long out, int outPos, int outCap) {
    int ip = 0;
    int op = outPos;
    while (ip < inLen) {
      int token = Platform.getByte(null, in + ip++) & 0xFF;
      int lit = token >>> 4;
      if (lit == 15) {
        int b;
        do {
          if (ip >= inLen) return -1;
          b = Platform.getByte(null, in + ip++) & 0xFF;
          lit += b;
          if (lit < 0) return -1;
        } while (b == 255);
      }
      if (lit > inLen - ip || lit > outCap - op) return -1;
      Platform.copyMemory(null, in + ip, null, out + op, lit);
      ip += lit;
      op += lit;
      if (ip == inLen) break;                   // the last sequence has literals only
      if (inLen - ip < 2) return -1;
      int offset = (Platform.getByte(null, in + ip) & 0xFF)
          | ((Platform.getByte(null, in + ip + 1) & 0xFF) << 8);
      ip += 2;
      if (offset == 0 || offset > op) return -1;
      int mlen = token & 15;
      if (mlen == 15) {
        int b;
        do {
          if (ip >= inLen) return -1;
          b = Platform.getByte(null, in + ip++) & 0xFF;
          mlen += b;
          if (mlen < 0) return -1;
        } while (b == 255);
      }
      mlen += 4;
      if (mlen > outCap - op) return -1;
      long from = out + op - offset;
      if (offset >= mlen) {
        Platform.copyMemory(null, from, null, out + op, mlen);
      } else if (offset >= 8) {                  // overlapping: copy in steps of `offset`
        int done = 0;
        while (done < mlen) {
          int step = Math.min(offset, mlen - done);
          Platform.copyMemory(null, from + done, null, out + op + done, step);
          done += step;
        }
      } else {
        for (int k = 0; k < mlen; k++) {
          Platform.putByte(null, out + op + k, Platform.getByte(null, from + k));
        }
      }
      op += mlen;
    }
    return op;
  }

  /** Compress src into dst (a direct buffer of at least bound(codec, len)); returns the size. */
  static int compress(int codec, ByteBuffer src, int srcOff, int len, ByteBuffer dst, int dstOff,
                      int level) {
    if (codec == ZSTD) {
      long n = Zstd.compressDirectByteBuffer(dst, dstOff, dst.capacity() - dstOff, src, srcOff, len,
                                             level);
      if (Zstd.isError(n)) throw new IllegalStateException("ZSTD: " + Zstd.getErrorName(n));
      return (int) n;
    }
    // An LZ4 frame of independent blocks of at most 4 MiB each, no checksums.
    long dAddr = Memory.address(dst) + dstOff;
    Platform.putInt(null, dAddr, LZ4_MAGIC);
    Platform.putByte(null, dAddr + 4, LZ4_DESCRIPTOR[0]);
    Platform.putByte(null, dAddr + 5, LZ4_DESCRIPTOR[1]);
    Platform.putByte(null, dAddr + 6, LZ4_HEADER_CHECKSUM);
    int op = 7;
    LZ4Compressor c = LZ4.fastCompressor();
    for (int done = 0; done < len; ) {
      int chunk = Math.min(len - done, 4 << 20);
      int n = c.compress(src, srcOff + done, chunk, dst, dstOff + op + 4,
                         dst.capacity() - dstOff - op - 4);
      if (n >= chunk) {                               // incompressible: store it raw
        Platform.copyMemory(null, Memory.address(src) + srcOff + done, null, dAddr + op + 4, chunk);
        Platform.putInt(null, dAddr + op, chunk | 0x80000000);
        n = chunk;
      } else {
        Platform.putInt(null, dAddr + op, n);
      }
      op += 4 + n;
      done += chunk;
    }
    Platform.putInt(null, dAddr + op, 0);
    return op + 4;
  }

  static long bound(int codec, long len) {
    if (codec == ZSTD) return Zstd.compressBound(len);
    return len + len / 255 + 16 + 8 * (len / (4 << 20) + 1) + 16;
  }
}
