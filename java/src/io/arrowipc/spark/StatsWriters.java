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
  static ObjectNode statistics(VectorSchemaRoot root) {
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
    return doc;
  }

  /**
   * Folds the statistics of a file's batches, in order, into the footer's summary (key
   * "arrowipc:file_statistics", documented in arrowipc/ipc/statistics.py): rows, each batch's
   * rows, per column the summed null count and the extreme bounds; a bound some batch with a
   * value left out is left out.
   */
  static final class Summary {
    private final ObjectNode columns = JSON.createObjectNode();
    private final com.fasterxml.jackson.databind.node.ArrayNode batchRows = JSON.createArrayNode();
    private final java.util.Set<String> unbounded = new java.util.HashSet<>();   // "column\0min"
    private final java.util.Set<String> decimals = new java.util.HashSet<>();
    private long rows;

    Summary(VectorSchemaRoot root) {
      for (FieldVector v : root.getFieldVectors()) {
        if (v instanceof DecimalVector) decimals.add(v.getName());   // bounds are decimal strings
      }
    }

    void add(ObjectNode stats) {
      long n = stats.get("rows").asLong();
      boolean first = batchRows.size() == 0;
      batchRows.add(n);
      rows += n;
      java.util.Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> it =
          stats.get("columns").fields();
      while (it.hasNext()) {
        Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> e = it.next();
        com.fasterxml.jackson.databind.JsonNode s = e.getValue();
        ObjectNode c = (ObjectNode) columns.get(e.getKey());
        if (c == null) {
          if (!first) continue;
          c = columns.putObject(e.getKey());
          c.put("null_count", 0L);
        }
        long nulls = s.get("null_count").asLong();
        c.put("null_count", c.get("null_count").asLong() + nulls);
        if (nulls >= n) continue;                  // no value: says nothing about the bounds
        for (String bound : new String[] {"min", "max"}) {
          String key = e.getKey() + "\0" + bound;
          if (unbounded.contains(key)) continue;
          com.fasterxml.jackson.databind.JsonNode v = s.get(bound);
          if (v == null) {
            unbounded.add(key);
            c.remove(bound);
          } else if (!c.has(bound)) {
            c.set(bound, v);
          } else {
            int cmp = compare(v, c.get(bound), decimals.contains(e.getKey()));
            if (bound.equals("min") ? cmp < 0 : cmp > 0) c.set(bound, v);
          }
        }
      }
    }

    /** Two bounds of one column: numbers, strings of decimals, or text (by UTF-8 bytes). */
    private static int compare(com.fasterxml.jackson.databind.JsonNode a,
                               com.fasterxml.jackson.databind.JsonNode b, boolean decimal) {
      if (a.isNumber() && b.isNumber()) return a.decimalValue().compareTo(b.decimalValue());
      if (decimal) return new BigDecimal(a.asText()).compareTo(new BigDecimal(b.asText()));
      return UTF8String.fromString(a.asText()).compareTo(UTF8String.fromString(b.asText()));
    }

    String document() {
      ObjectNode doc = JSON.createObjectNode();
      doc.put("version", 1);
      doc.put("rows", rows);
      doc.set("batch_rows", batchRows);
      doc.set("columns", columns);
      return doc.toString();
    }
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
      return StatsWriters.writeBatch(out, batch, statistics(root).toString(), option);
    }
  }

  /** The file format: magic, schema, batches, end-of-stream marker, footer, its length, magic. */
  static final class File extends ArrowWriter {
    private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);
    private final VectorSchemaRoot root;
    private final Map<String, String> footerMetadata;
    private final List<ArrowBlock> blocks = new ArrayList<>();
    private final Summary summary;

    File(VectorSchemaRoot root, WritableByteChannel ch, Map<String, String> footerMetadata,
         CompressionCodec.Factory factory, CompressionUtil.CodecType codec) {
      super(root, (DictionaryProvider) null, ch, IpcOption.DEFAULT, factory, codec, Optional.empty());
      this.root = root;
      this.footerMetadata = footerMetadata;
      this.summary = new Summary(root);
    }

    @Override
    protected void startInternal(WriteChannel out) throws IOException {
      out.write(MAGIC);
      out.align();
    }

    @Override
    protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
      ObjectNode stats = statistics(root);
      ArrowBlock block = StatsWriters.writeBatch(out, batch, stats.toString(), option);
      blocks.add(block);
      summary.add(stats);
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
      Map<String, String> meta = new HashMap<>();
      if (footerMetadata != null) meta.putAll(footerMetadata);
      meta.put(StatsFilter.FILE_KEY, summary.document());
      out.write(new ArrowFooter(schema, Collections.emptyList(), blocks, meta,
          option.metadataVersion), false);
      out.writeIntLittleEndian((int) (out.getCurrentPosition() - footerStart));
      out.write(MAGIC);
    }
  }
}
