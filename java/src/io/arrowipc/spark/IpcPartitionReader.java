package io.arrowipc.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one partition's record batches as ColumnarBatches: message headers first (a batch whose
 * statistics rule out every pushed filter is skipped before its body is read), then only the
 * wanted columns' buffers. Dictionaries are read once, only those the wanted columns use; delta
 * dictionary batches append to theirs.
 */
final class IpcPartitionReader implements PartitionReader<ColumnarBatch> {
  private final IpcPartition part;
  private final StructType schema;
  private final IpcFile file;
  private final List<Field> fields;
  private final boolean[] wanted;
  private final DataType[] types;
  private final Map<Long, Vectors.Vec> dictionaries = new HashMap<>();
  private final Map<Long, Field> dictionaryFields = new HashMap<>();
  private final Set<Long> neededDictionaries = new HashSet<>();
  private final List<Memory> dictionaryMemory = new ArrayList<>();
  private final BatchDecoder decoder;
  private final StatsFilter stats;
  private final Memory raw = new Memory();
  private final Memory decoded = new Memory();
  private int next;                 // file format: the next batch index
  private long streamOffset;        // stream format: the next message
  private int streamIndex;
  private ColumnarBatch current;
  // the message being read, for errors: "<path> (record batch 3, message at byte 1234)"
  private String reading;

  /** `conf` opens Hadoop file system inputs (null: the driver's, or Hadoop's defaults). */
  IpcPartitionReader(IpcPartition part, StructType schema, Filter[] filters,
                     org.apache.hadoop.conf.Configuration conf) {
    this(part, schema, filters, opened(part.path, conf));
  }

  private static IpcFile opened(String path, org.apache.hadoop.conf.Configuration conf) {
    IpcFile f = IpcFile.open(path, conf);
    ReadStats.fileOpened();
    return f;
  }

  /** A reader of `file`, open already (closed by close(), or here if this fails). */
  IpcPartitionReader(IpcPartition part, StructType schema, Filter[] filters, IpcFile file) {
    this.part = part;
    this.schema = schema;
    this.file = file;
    boolean ok = false;
    try {
      fields = file.schema.getFields();
      wanted = new boolean[fields.size()];
      types = new DataType[fields.size()];
      for (int j = 0; j < part.columns.length; j++) {
        int i = part.columns[j];
        if (i < 0) continue;
        wanted[i] = true;
        types[i] = SparkTypes.typeOf(fields.get(i), "field '" + fields.get(i).getName() + "' of "
            + part.path, true);
      }
      for (Field f : fields) collectDictionaries(f);
      for (int i = 0; i < fields.size(); i++) if (wanted[i]) need(fields.get(i));
      decoder = new BatchDecoder(file, dictionaries);
      stats = StatsFilter.of(filters, fields);
      next = part.start;
      streamOffset = file.firstMessage;
      if (file.fileFormat) readFileDictionaries();
      ok = true;
    } catch (IOException e) {
      throw new IpcException("arrowipc: cannot read " + part.path + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw IpcException.corrupt(reading == null ? part.path : reading, e);
    } finally {
      if (!ok) file.close();
    }
  }

  /** Every dictionary's value field, by id (the field without its encoding). */
  private void collectDictionaries(Field f) {
    DictionaryEncoding enc = f.getDictionary();
    if (enc != null) {
      Field value = new Field(f.getName(), new FieldType(true, f.getType(), null, f.getMetadata()),
          f.getChildren());
      dictionaryFields.put(enc.getId(), value);
    }
    for (Field c : f.getChildren()) collectDictionaries(c);
  }

  private void need(Field f) {
    DictionaryEncoding enc = f.getDictionary();
    if (enc != null && neededDictionaries.add(enc.getId())) need(dictionaryFields.get(enc.getId()));
    if (enc == null) for (Field c : f.getChildren()) need(c);
  }

  private void readFileDictionaries() throws IOException {
    for (int i = 0; i < file.dictionaryBlocks.length; i++) {
      reading = part.path + " (dictionary batch " + i + ", message at byte "
          + file.dictionaryBlocks[i][0] + ")";
      IpcFile.Framed m = file.readBlock(file.dictionaryBlocks[i], "dictionary batch", i);
      loadDictionary(m, "dictionary batch " + i);
    }
  }

  private void loadDictionary(IpcFile.Framed m, String what) throws IOException {
    if (m.message.headerType() != MessageHeader.DictionaryBatch) {
      throw new IpcException("arrowipc: " + part.path + ": " + what + " is not a dictionary batch");
    }
    DictionaryBatch db = (DictionaryBatch) m.message.header(new DictionaryBatch());
    long id = db.id();
    if (!neededDictionaries.contains(id)) return;
    Vectors.Vec before = dictionaries.get(id);
    if (db.isDelta() && before == null) {
      throw new IpcException("arrowipc: " + part.path + ": " + what + " is a delta for dictionary "
          + id + ", which no earlier dictionary batch sent");
    }
    Field value = dictionaryFields.get(id);
    DataType t = SparkTypes.typeOf(value, "dictionary " + id + " of " + part.path, false);
    Memory r = new Memory(), d = new Memory();
    dictionaryMemory.add(r);
    dictionaryMemory.add(d);
    List<Field> one = java.util.Collections.singletonList(value);
    Vectors.Vec[] v = decoder.decode(db.data(), m.bodyOffset, m.message.bodyLength(), one,
        new DataType[] {t}, new boolean[] {true}, part.path + " (" + what + ")", r, d);
    // a delta appends values; batches already returned keep the dictionary they were read with
    dictionaries.put(id, db.isDelta() ? Vectors.ConcatVec.of(before, v[0], part.path + " (" + what + ")")
        : v[0]);
  }

  @Override
  public boolean next() throws IOException {
    try {
      return readNext();
    } catch (RuntimeException e) {          // flatbuffer accessors on corrupt metadata
      throw IpcException.corrupt(reading, e);
    }
  }

  private boolean readNext() throws IOException {
    while (true) {
      IpcFile.Framed m;
      String where;
      if (file.fileFormat) {
        if (next >= part.end) return false;
        where = part.path + " (record batch " + next + ")";
        reading = part.path + " (record batch " + next + ", message at byte "
            + file.batchBlocks[next][0] + ")";
        m = file.readBlock(file.batchBlocks[next], "record batch", next);
        next++;
      } else {
        reading = part.path + " (message at byte " + streamOffset + ")";
        m = file.readMessage(streamOffset);
        if (m == null) return false;
        long at = streamOffset;
        streamOffset = m.end;
        if (m.message.headerType() == MessageHeader.DictionaryBatch) {
          reading = part.path + " (dictionary batch, message at byte " + at + ")";
          loadDictionary(m, "dictionary batch at byte " + (m.bodyOffset));
          continue;
        }
        where = part.path + " (record batch " + streamIndex++ + ")";
        reading = part.path + " (record batch " + (streamIndex - 1) + ", message at byte " + at
            + ")";
      }
      if (m.message.headerType() != MessageHeader.RecordBatch) {
        throw new IpcException("arrowipc: " + where + ": expected a record batch message, found "
            + "message type " + m.message.headerType());
      }
      RecordBatch rb = (RecordBatch) m.message.header(new RecordBatch());
      if (stats != null && !stats.mightMatch(customMetadata(m.message))) {
        ReadStats.batch(true);
        continue;
      }
      ReadStats.batch(false);
      current = toBatch(rb, m, where);
      return true;
    }
  }

  static Map<String, String> customMetadata(Message m) {
    int n = m.customMetadataLength();
    if (n == 0) return null;
    Map<String, String> out = new HashMap<>();
    KeyValue kv = new KeyValue();
    for (int i = 0; i < n; i++) {
      m.customMetadata(kv, i);
      if (kv.key() != null) out.put(kv.key(), kv.value());
    }
    return out;
  }

  private ColumnarBatch toBatch(RecordBatch rb, IpcFile.Framed m, String where) throws IOException {
    Vectors.Vec[] vecs = decoder.decode(rb, m.bodyOffset, m.message.bodyLength(), fields, types,
        wanted, where, raw, decoded);
    int rows = (int) rb.length();
    ColumnVector[] out = new ColumnVector[part.columns.length];
    StructField[] sf = schema.fields();
    for (int j = 0; j < out.length; j++) {
      int i = part.columns[j];
      Vectors.Vec v = i < 0 ? new Vectors.NullVec(sf[j].dataType(), rows) : vecs[i];
      if (i >= 0 && sf[j].dataType().equals(org.apache.spark.sql.types.DataTypes.StringType)
          && !types[i].equals(sf[j].dataType())) {
        v = new Vectors.TextVec(sf[j].dataType(), v, types[i].equals(org.apache.spark.sql.types.DataTypes.BooleanType));
      }
      if (v.length < rows) {
        throw new IpcException("arrowipc: " + where + ": column '" + sf[j].name() + "' has "
            + v.length + " values for " + rows + " rows");
      }
      if (!sf[j].nullable() && v.numNulls() > 0) {
        throw new IpcException("arrowipc: column '" + sf[j].name() + "' of " + where + " has "
            + v.numNulls() + " nulls but the schema declares it NOT NULL");
      }
      out[j] = v;
    }
    return new ColumnarBatch(out, rows);
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public void close() {
    file.close();
    raw.release();
    decoded.release();
    for (Memory mem : dictionaryMemory) mem.release();
  }
}
