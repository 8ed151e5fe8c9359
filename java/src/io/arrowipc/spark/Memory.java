package io.arrowipc.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.arrow.memory.util.MemoryUtil;

/** Direct memory for batch bodies: one growing buffer per use, reused from batch to batch. */
final class Memory {
  /** The largest body (or decompressed body) one batch may occupy: one direct buffer. */
  static final long MAX_BYTES = Integer.MAX_VALUE - 64;

  private ByteBuffer buffer;
  private long address;

  static long address(ByteBuffer b) {
    return MemoryUtil.getByteBufferAddress(b);
  }

  /** A direct little-endian buffer of at least `size` bytes (contents undefined). */
  ByteBuffer ensure(long size, String what) {
    if (size > MAX_BYTES) {
      throw new IpcException(what + " needs " + size + " bytes, more than the " + MAX_BYTES
          + " one record batch may hold here");
    }
    if (buffer == null || buffer.capacity() < size) {
      long grown = buffer == null ? size : Math.max(size, Math.min(MAX_BYTES, buffer.capacity() * 3L / 2));
      buffer = ByteBuffer.allocateDirect((int) grown).order(ByteOrder.LITTLE_ENDIAN);
      address = address(buffer);
    }
    return buffer;
  }

  long address() {
    return address;
  }

  void release() {
    buffer = null;
    address = 0;
  }
}
