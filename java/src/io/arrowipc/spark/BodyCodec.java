package io.arrowipc.spark;

import java.nio.ByteBuffer;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.AbstractCompressionCodec;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;

/**
 * Arrow Java's writers compressing with {@link Codecs} (lz4-java, zstd-jni) instead of Arrow
 * Java's own codecs (its LZ4 goes through a slow pure-Java stream).
 */
final class BodyCodec extends AbstractCompressionCodec {
  static final CompressionCodec.Factory FACTORY = new CompressionCodec.Factory() {
    @Override
    public CompressionCodec createCodec(CompressionUtil.CodecType type) {
      return createCodec(type, 1);
    }

    @Override
    public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
      if (type == CompressionUtil.CodecType.NO_COMPRESSION) return NoCompressionCodec.INSTANCE;
      return new BodyCodec(type, level);
    }
  };

  private final CompressionUtil.CodecType type;
  private final int codec;
  private final int level;

  BodyCodec(CompressionUtil.CodecType type, int level) {
    this.type = type;
    this.codec = type == CompressionUtil.CodecType.ZSTD ? Codecs.ZSTD : Codecs.LZ4_FRAME;
    this.level = level;
  }

  @Override
  protected ArrowBuf doCompress(BufferAllocator allocator, ArrowBuf data) {
    long len = data.writerIndex();
    long bound = CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + Codecs.bound(codec, len);
    ArrowBuf out = allocator.buffer(bound);
    ByteBuffer src = data.nioBuffer(0, (int) len);
    ByteBuffer dst = out.nioBuffer(0, (int) bound);
    int n = Codecs.compress(codec, src, 0, (int) len, dst, (int) CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, level);
    out.writerIndex(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + n);
    return out;
  }

  @Override
  protected ArrowBuf doDecompress(BufferAllocator allocator, ArrowBuf data) {
    throw new UnsupportedOperationException("arrowipc decodes bodies itself");
  }

  @Override
  public CompressionUtil.CodecType getCodecType() {
    return type;
  }
}
