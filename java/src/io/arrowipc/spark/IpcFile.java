package io.arrowipc.spark;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.hadoop.conf.Configuration;

/**
 * One Arrow IPC input, read through a Source (a local file, a Hadoop FileSystem path or an
 * http(s) URL): the file format (magic ARROW1 or ALKAID1, a footer
 * indexing the record batches) or the stream format (messages one after another).
 *
 * <p>Only metadata is read here: the footer, the schema, message headers. Every length and offset
 * comes from the file and is checked against the file's size before use.
 */
final class IpcFile implements Closeable {
  static final byte[][] MAGICS = {
      "ARROW1".getBytes(StandardCharsets.US_ASCII), "ALKAID1".getBytes(StandardCharsets.US_ASCII)};
  static final int MAX_METADATA = 64 << 20;
  private static final int CONTINUATION = 0xFFFFFFFF;

  final String path;
  final long size;
  final boolean fileFormat;
  final Schema schema;                      // message format: dictionary fields hold value types
  final long[][] batchBlocks;              // file format: {offset, metadata length, body length}
  final long[][] dictionaryBlocks;
  final Map<String, String> footerMetadata;
  final long firstMessage;                 // stream format: where the first message after the schema starts
  final Meta meta;
  private Source source;                   // null until a read needs it (metadata from FooterCache)
  private final java.util.function.Supplier<Source> opener;

  /**
   * What the footer (file format) or the leading schema message (stream) says, parsed once and
   * never changed after: the driver's FooterCache shares it between queries and threads. The
   * row counts planning takes from message headers are kept here too once read.
   */
  static final class Meta {
    final long size;
    final boolean fileFormat;
    final Schema schema;
    final long[][] batchBlocks;
    final long[][] dictionaryBlocks;
    final Map<String, String> footerMetadata;
    final long firstMessage;
    /**
     * Roughly what keeping this costs on the heap: the schema's Java objects and the footer's
     * UTF-16 strings take several times the metadata's bytes in the file; each block is a long[3]
     * and its reference, and later its batch's row count.
     */
    final long weight;
    volatile long[] batchRows;             // file format: rows of each batch, once read
    volatile long streamRows = -1;         // stream format: rows of all batches, once read

    Meta(long size, boolean fileFormat, Schema schema, long[][] batchBlocks,
         long[][] dictionaryBlocks, Map<String, String> footerMetadata, long firstMessage,
         long metadataBytes) {
      this.size = size;
      this.fileFormat = fileFormat;
      this.schema = schema;
      this.batchBlocks = batchBlocks;
      this.dictionaryBlocks = dictionaryBlocks;
      this.footerMetadata = java.util.Collections.unmodifiableMap(footerMetadata);
      this.firstMessage = firstMessage;
      long blocks = (batchBlocks == null ? 0 : batchBlocks.length)
          + (dictionaryBlocks == null ? 0 : dictionaryBlocks.length);
      this.weight = 6 * metadataBytes + 64 * blocks;
    }
  }

  /** A framed message read at some offset: its flatbuffer header and where its body lies. */
  static final class Framed {
    final Message message;
    final long bodyOffset;
    final long end;           // offset just after the body

    Framed(Message message, long bodyOffset, long end) {
      this.message = message;
      this.bodyOffset = bodyOffset;
      this.end = end;
    }
  }

  /**
   * An input whose metadata is known (FooterCache; or only its size, while read()
   * reads the rest): `source` is the input if it is open already, else null and `opener` opens
   * it when a read needs it (message headers, bodies).
   */
  IpcFile(String path, Meta meta, Source source, java.util.function.Supplier<Source> opener) {
    this.path = path;
    this.meta = meta;
    this.source = source;
    this.opener = opener;
    size = meta.size;
    fileFormat = meta.fileFormat;
    schema = meta.schema;
    batchBlocks = meta.batchBlocks;
    dictionaryBlocks = meta.dictionaryBlocks;
    footerMetadata = meta.footerMetadata;
    firstMessage = meta.firstMessage;
  }

  /** Read the metadata of an open source (closed here if that fails). */
  static IpcFile read(Source source) {
    String path = source.name();
    boolean ok = false;
    try {
      Meta sizeOnly = new Meta(source.size(), false, null, null, null, new HashMap<>(), -1, 0);
      Meta meta = new IpcFile(path, sizeOnly, source, null).readMeta();
      IpcFile f = new IpcFile(path, meta, source, null);
      ok = true;
      return f;
    } catch (IOException e) {
      throw new IpcException("arrowipc: cannot read " + path + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {            // flatbuffer accessors on corrupt metadata
      throw IpcException.corrupt(path, e);
    } finally {
      if (!ok) source.close();
    }
  }

  /** The footer (file format) or the leading schema message (stream), read. */
  private Meta readMeta() throws IOException {
    ByteBuffer head = read(0, (int) Math.min(8, size));
    byte[] h = new byte[head.remaining()];
    head.get(h);
    if (h.length >= 4 && h[0] == 'F' && h[1] == 'E' && h[2] == 'A' && h[3] == '1') {
      throw new IpcException("arrowipc: " + path + " is a Feather V1 file, which is not Arrow IPC; "
          + "rewrite it as Feather V2 / Arrow IPC");
    }
    byte[] magic = magicOf(h);
    if (magic == null && !looksLikeStream(h)) {
      throw new IpcException("arrowipc: " + path + " is not an Arrow IPC file or stream: expected "
          + "the magic 'ARROW1' or 'ALKAID1' or a continuation marker at byte 0, found "
          + describe(h));
    }
    if (magic != null) {
      long[][][] blocks = new long[2][][];
      Map<String, String> footerMeta = new HashMap<>();
      long[] footerLen = new long[1];
      Schema s = readFooter(magic, blocks, footerMeta, footerLen);
      return new Meta(size, true, s, blocks[1], blocks[0], footerMeta, -1, footerLen[0]);
    }
    Framed first = readMessage(0);
    if (first == null || first.message.headerType() != MessageHeader.Schema) {
      throw new IpcException("arrowipc: " + path + " is neither an Arrow IPC file (magic ARROW1 "
          + "or ALKAID1) nor a stream starting with a schema message");
    }
    org.apache.arrow.flatbuf.Schema fb = (org.apache.arrow.flatbuf.Schema)
        first.message.header(new org.apache.arrow.flatbuf.Schema());
    return new Meta(size, false, Schemas.convert(fb), null, null, new HashMap<>(), first.end,
        first.bodyOffset);
  }

  /** The source, opened now if it was not; it must still have the size the metadata was read at. */
  private Source source() {
    if (source == null) {
      Source s = opener.get();
      if (s.size() != size) {
        s.close();
        throw new IpcException("arrowipc: " + path + " changed while it was read: it had " + size
            + " bytes when its metadata was read and has " + s.size() + " now");
      }
      source = s;
    }
    return source;
  }

  /** Open a local path or a URL; `conf` configures Hadoop file systems (null: the driver's). */
  static IpcFile open(String path, Configuration conf) {
    return read(Source.open(path, conf));
  }

  /** A stream starts with a continuation marker or (before format 0.15) a metadata length. */
  private static boolean looksLikeStream(byte[] h) {
    if (h.length == 0) return true;
    if (h.length < 4) return false;
    int first = (h[0] & 0xFF) | (h[1] & 0xFF) << 8 | (h[2] & 0xFF) << 16 | (h[3] & 0xFF) << 24;
    if (first == CONTINUATION) return true;
    return !(h[0] == 'P' && h[1] == 'A' && h[2] == 'R' && h[3] == '1') && first >= 0
        && first <= MAX_METADATA;
  }

  private static String describe(byte[] h) {
    StringBuilder hex = new StringBuilder();
    for (byte b : h) hex.append(hex.length() == 0 ? "" : " ").append(String.format("%02x", b & 0xFF));
    if (h.length >= 4 && h[0] == 'P' && h[1] == 'A' && h[2] == 'R' && h[3] == '1') {
      return "a Parquet file, not Arrow IPC, starting " + hex;
    }
    return hex.toString();
  }

  private static byte[] magicOf(byte[] head) {
    for (byte[] m : MAGICS) {
      if (head.length >= m.length && Arrays.equals(Arrays.copyOf(head, m.length), m)) return m;
    }
    return null;
  }

  ByteBuffer read(long offset, int length) throws IOException {
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      throw new IpcException("arrowipc: " + path + ": expected " + length + " bytes at byte " + offset
          + " but the file has " + size + " bytes; it may be truncated");
    }
    ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    readFully(b, offset);
    b.flip();
    return b;
  }

  /** Fill `dst` from its position to its limit with the file's bytes from `offset`. */
  void readFully(ByteBuffer dst, long offset) throws IOException {
    source().readFully(dst, offset);
  }

  /** Fill each buffer with the bytes at its offset (remote inputs fetch them together). */
  void readRanges(List<ByteBuffer> dsts, long[] offsets) throws IOException {
    source().readRanges(dsts, offsets);
  }

  private Schema readFooter(byte[] magic, long[][][] blocks, Map<String, String> meta,
                            long[] footerBytes) throws IOException {
    int trailer = magic.length + 4;
    if (size < 8 + trailer + 4) {
      throw new IpcException("arrowipc: " + path + ": " + size + " bytes is too small for an Arrow "
          + "IPC file");
    }
    ByteBuffer tail = read(size - trailer, trailer);
    int footerLen = tail.getInt(0);
    byte[] endMagic = new byte[magic.length];
    tail.position(4);
    tail.get(endMagic);
    if (magicOf(endMagic) == null) {
      throw new IpcException("arrowipc: " + path + ": expected the magic "
          + new String(magic, StandardCharsets.US_ASCII) + " at the end (byte "
          + (size - magic.length) + "); the file may be truncated");
    }
    long footerEnd = size - trailer;
    if (footerLen <= 0 || footerLen > footerEnd - 8 || footerLen > MAX_METADATA) {
      throw new IpcException("arrowipc: " + path + ": footer length " + footerLen
          + " does not fit in the " + size + "-byte file");
    }
    Footer footer = Footer.getRootAsFooter(read(footerEnd - footerLen, footerLen));
    footerBytes[0] = footerLen;
    org.apache.arrow.flatbuf.Schema fb = footer.schema();
    if (fb == null) throw new IpcException("arrowipc: " + path + ": the footer has no schema");
    blocks[0] = blocks(footer, true, footerEnd - footerLen);
    blocks[1] = blocks(footer, false, footerEnd - footerLen);
    for (int i = 0; i < footer.customMetadataLength(); i++) {   // the file's, not the schema's
      KeyValue kv = footer.customMetadata(i);
      if (kv.key() != null) meta.put(kv.key(), kv.value());
    }
    return Schemas.convert(fb);
  }

  private long[][] blocks(Footer footer, boolean dictionaries, long limit) {
    int n = dictionaries ? footer.dictionariesLength() : footer.recordBatchesLength();
    int most = footer.getByteBuffer().capacity() / 24;         // a Block is 24 bytes
    if (n < 0 || n > most) {
      throw new IpcException("arrowipc: " + path + ": the footer claims " + n + " "
          + (dictionaries ? "dictionary" : "record batch") + " blocks, more than its "
          + footer.getByteBuffer().capacity() + " bytes hold");
    }
    long[][] out = new long[n][];
    Block b = new Block();
    for (int i = 0; i < n; i++) {
      if (dictionaries) footer.dictionaries(b, i); else footer.recordBatches(b, i);
      long off = b.offset();
      long meta = b.metaDataLength();
      long body = b.bodyLength();
      if (off < 0 || meta <= 0 || body < 0 || off > limit || meta > limit - off
          || body > limit - off - meta) {
        throw new IpcException("arrowipc: " + path + ": footer block " + i + " of the "
            + (dictionaries ? "dictionaries" : "record batches") + " (offset " + off + ", "
            + meta + " + " + body + " bytes) lies outside the file's " + limit + " bytes of messages");
      }
      out[i] = new long[] {off, meta, body};
    }
    return out;
  }

  /** The message framed at `offset` (null at an end-of-stream marker or the end of the file). */
  Framed readMessage(long offset) throws IOException {
    if (offset == size) return null;
    if (size - offset < 4) {
      throw new IpcException("arrowipc: " + path + ": " + (size - offset) + " stray bytes at byte "
          + offset + " where a message or the end-of-stream marker was expected");
    }
    ByteBuffer p = read(offset, (int) Math.min(8, size - offset));
    int first = p.getInt(0);
    long metaStart;
    int metaLen;
    if (first == CONTINUATION) {
      if (p.limit() < 8) throw new IpcException("arrowipc: " + path + ": truncated message at byte " + offset);
      metaLen = p.getInt(4);
      metaStart = offset + 8;
    } else {                                     // the pre-1.0 framing, without the marker
      metaLen = first;
      metaStart = offset + 4;
    }
    if (metaLen == 0) return null;
    if (metaLen < 0 || metaLen > MAX_METADATA || metaLen > size - metaStart) {
      throw new IpcException("arrowipc: " + path + ": message at byte " + offset + " claims "
          + metaLen + " bytes of metadata but the file has " + (size - metaStart) + " left");
    }
    Message m;
    long bodyLen;
    try {
      m = Message.getRootAsMessage(read(metaStart, metaLen));
      bodyLen = m.bodyLength();
      m.headerType();
    } catch (RuntimeException e) {
      throw IpcException.corrupt(path + " (message at byte " + offset + ")", e);
    }
    long bodyOffset = metaStart + metaLen;
    if (bodyLen < 0 || bodyLen > size - bodyOffset) {
      throw new IpcException("arrowipc: " + path + ": message at byte " + offset + " has a body of "
          + bodyLen + " bytes but the file has " + (size - bodyOffset) + " left");
    }
    return new Framed(m, bodyOffset, bodyOffset + bodyLen);
  }

  /** The framed message of a footer block (file format). */
  Framed readBlock(long[] block, String what, int index) throws IOException {
    source().willRead(block[0], block[1]);       // prefix and metadata: one request when remote
    Framed f = readMessage(block[0]);
    if (f == null || f.bodyOffset > block[0] + block[1] || f.message.bodyLength() != block[2]) {
      throw new IpcException("arrowipc: " + path + ": " + what + " " + index + " at byte " + block[0]
          + " does not match its footer block");
    }
    return new Framed(f.message, block[0] + block[1], block[0] + block[1] + block[2]);
  }

  @Override
  public void close() {
    if (source != null) source.close();
  }
}
