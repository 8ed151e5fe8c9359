package io.arrowipc.spark;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.flatbuffers.FlatBufferBuilder;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Arrow Java's IPC writers with each record batch's statistics in its custom metadata (the
 * documented "arrowipc:statistics" key, see docs/spark.md), which Arrow Java's own writers cannot
 * add. The record batch message is framed as Arrow Java frames it, plus the metadata.
 */
final class StatsWriters {
  static final int MAX_STRING_CHARS = 64;
  private static final ObjectMapper JSON = new ObjectMapper();

  private StatsWriters() {}

  static ArrowWriter open(VectorSchemaRoot root, WritableByteChannel ch, boolean stream,
                          Map<String, String> footerMetadata, CompressionCodec.Factory factory,
                          CompressionUtil.CodecType codec) {
    if (stream) return new Stream(root, ch, factory, codec);
    return new File(root, ch, footerMetadata, factory, codec);
  }

  /** The statistics document of the batch now in `root`. */
  static String statistics(VectorSchemaRoot root) {
    ObjectNode doc = JSON.createObjectNode();
    doc.put("version", 1);
    doc.put("rows", root.getRowCount());
    ObjectNode cols = doc.putObject("columns");
    Map<String, Integer> seen = new HashMap<>();
    for (FieldVector v : root.getFieldVectors()) seen.merge(v.getName(), 1, Integer::sum);
    for (FieldVector v : root.getFieldVectors()) {
      if (seen.get(v.getName()) != 1) continue;
      ObjectNode c = cols.putObject(v.getName());
      int n = root.getRowCount();
      c.put("null_count", v.getNullCount());
      if (v.getNullCount() >= n) continue;
      if (v instanceof BigIntVector || v instanceof IntVector || v instanceof SmallIntVector
          || v instanceof TinyIntVector || v instanceof DateDayVector || v instanceof TimeStampVector) {
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
          if (v.isNull(i)) continue;
          long x = ((Number) longOf(v, i)).longValue();
          lo = Math.min(lo, x);
          hi = Math.max(hi, x);
        }
        c.put("min", lo);
        c.put("max", hi);
      } else if (v instanceof Float8Vector || v instanceof Float4Vector) {
        double lo = Double.POSITIVE_INFINITY, hi = Double.NEGATIVE_INFINITY;
        boolean nan = false;
        for (int i = 0; i < n && !nan; i++) {
          if (v.isNull(i)) continue;
          double x = v instanceof Float8Vector ? ((Float8Vector) v).get(i) : ((Float4Vector) v).get(i);
          nan = Double.isNaN(x);
          lo = Math.min(lo, x);
          hi = Math.max(hi, x);
        }
        if (!nan) {
          c.put("min", lo);
          c.put("max", hi);
        }
      } else if (v instanceof VarCharVector) {
        UTF8String lo = null, hi = null;
        VarCharVector s = (VarCharVector) v;
        for (int i = 0; i < n; i++) {
          if (s.isNull(i)) continue;
          UTF8String x = UTF8String.fromBytes(s.get(i));
          if (lo == null || x.compareTo(lo) < 0) lo = x;
          if (hi == null || x.compareTo(hi) > 0) hi = x;
        }
        String min = lo.toString();
        c.put("min", min.codePointCount(0, min.length()) > MAX_STRING_CHARS
            ? min.substring(0, min.offsetByCodePoints(0, MAX_STRING_CHARS)) : min);
        String max = hi.toString();
        if (max.codePointCount(0, max.length()) <= MAX_STRING_CHARS) c.put("max", max);
      } else if (v instanceof DecimalVector) {
        BigDecimal lo = null, hi = null;
        for (int i = 0; i < n; i++) {
          if (v.isNull(i)) continue;
          BigDecimal x = ((DecimalVector) v).getObject(i);
          if (lo == null || x.compareTo(lo) < 0) lo = x;
          if (hi == null || x.compareTo(hi) > 0) hi = x;
        }
        c.put("min", lo.toPlainString());
        c.put("max", hi.toPlainString());
      }
    }
    return doc.toString();
  }

  private static Object longOf(FieldVector v, int i) {
    if (v instanceof BigIntVector) return ((BigIntVector) v).get(i);
    if (v instanceof IntVector) return ((IntVector) v).get(i);
    if (v instanceof SmallIntVector) return ((SmallIntVector) v).get(i);
    if (v instanceof TinyIntVector) return ((TinyIntVector) v).get(i);
    if (v instanceof DateDayVector) return ((DateDayVector) v).get(i);
    return ((TimeStampVector) v).get(i);
  }

  /** A record batch message with custom metadata, framed as Arrow Java frames messages. */
  static ArrowBlock writeBatch(WriteChannel out, ArrowRecordBatch batch, String stats,
                               IpcOption option) throws IOException {
    FlatBufferBuilder b = new FlatBufferBuilder();
    int header = batch.writeTo(b);
    int kv = KeyValue.createKeyValue(b, b.createString(StatsFilter.KEY), b.createString(stats));
    int md = Message.createCustomMetadataVector(b, new int[] {kv});
    Message.startMessage(b);
    Message.addHeaderType(b, MessageHeader.RecordBatch);
    Message.addHeader(b, header);
    Message.addVersion(b, option.metadataVersion.toFlatbufID());
    Message.addBodyLength(b, batch.computeBodyLength());
    Message.addCustomMetadata(b, md);
    b.finish(Message.endMessage(b));
    ByteBuffer meta = b.dataBuffer();
    long start = out.getCurrentPosition();
    int metaLen = MessageSerializer.writeMessageBuffer(out, meta.remaining(), meta, option);
    out.align();
    long bodyLen = MessageSerializer.writeBatchBuffers(out, batch);
    return new ArrowBlock(start, metaLen, bodyLen);
  }

  static final class Stream extends ArrowStreamWriter {
    private final VectorSchemaRoot root;

    Stream(VectorSchemaRoot root, WritableByteChannel ch, CompressionCodec.Factory factory,
           CompressionUtil.CodecType codec) {
      super(root, null, ch, IpcOption.DEFAULT, factory, codec);
      this.root = root;
    }

    @Override
    protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
      return StatsWriters.writeBatch(out, batch, statistics(root), option);
    }
  }

  /** The file format: magic, schema, batches, end-of-stream marker, footer, its length, magic. */
  static final class File extends ArrowWriter {
    private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);
    private final VectorSchemaRoot root;
    private final Map<String, String> footerMetadata;
    private final List<ArrowBlock> blocks = new ArrayList<>();

    File(VectorSchemaRoot root, WritableByteChannel ch, Map<String, String> footerMetadata,
         CompressionCodec.Factory factory, CompressionUtil.CodecType codec) {
      super(root, (DictionaryProvider) null, ch, IpcOption.DEFAULT, factory, codec, Optional.empty());
      this.root = root;
      this.footerMetadata = footerMetadata;
    }

    @Override
    protected void startInternal(WriteChannel out) throws IOException {
      out.write(MAGIC);
      out.align();
    }

    @Override
    protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
      ArrowBlock block = StatsWriters.writeBatch(out, batch, statistics(root), option);
      blocks.add(block);
      return block;
    }

    @Override
    protected void ensureDictionariesWritten(DictionaryProvider provider, java.util.Set<Long> ids) {
      // rows from Spark carry no dictionaries
    }

    @Override
    protected void endInternal(WriteChannel out) throws IOException {
      out.writeIntLittleEndian(MessageSerializer.IPC_CONTINUATION_TOKEN);
      out.writeIntLittleEndian(0);
      long footerStart = out.getCurrentPosition();
      out.write(new ArrowFooter(schema, Collections.emptyList(), blocks, footerMetadata,
          option.metadataVersion), false);
      out.writeIntLittleEndian((int) (out.getCurrentPosition() - footerStart));
      out.write(MAGIC);
    }
  }
}
