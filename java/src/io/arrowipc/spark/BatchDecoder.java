package io.arrowipc.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * Record batch bodies -> Spark column vectors, reading only the buffers of the wanted columns.
 *
 * <p>One pass over the header locates each top-level column's nodes and buffers (pre-order, as
 * the format lays them out); the byte spans of the wanted columns are read (coalesced when close),
 * decompressed buffer by buffer when the body is compressed, checked (sizes, offsets, indices)
 * and wrapped in {@link Vectors} without copying. Memory is reused from batch to batch: vectors of
 * a batch are valid until the next batch is decoded.
 */
final class BatchDecoder {
  /** Read spans closer than this are read as one. */
  static final int COALESCE_GAP = 4096;

  final IpcFile file;
  final Map<Long, Vectors.Vec> dictionaries;
  private final Memory raw = new Memory();
  private final Memory decoded = new Memory();

  // the batch being decoded
  private RecordBatch rb;
  private final FieldNode node = new FieldNode();
  private final Buffer buffer = new Buffer();
  private long[] addr;
  private long[] size;
  private String where;

  BatchDecoder(IpcFile file, Map<Long, Vectors.Vec> dictionaries) {
    this.file = file;
    this.dictionaries = dictionaries;
  }

  /** Where each top-level column's nodes, buffers and variadic counts start (one extra at the end). */
  static int[][] layout(List<Field> fields, RecordBatch rb) {
    int[][] starts = new int[fields.size() + 1][];
    int[] cur = new int[3];
    for (int i = 0; i < fields.size(); i++) {
      starts[i] = cur.clone();
      count(fields.get(i), cur);
    }
    starts[fields.size()] = cur.clone();
    return starts;
  }

  private static void count(Field f, int[] cur) {
    cur[0]++;
    if (f.getDictionary() != null) {
      cur[1] += 2;
      return;
    }
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Null: case RunEndEncoded: break;
      case Struct: case FixedSizeList: cur[1] += 1; break;
      case Utf8: case Binary: case LargeUtf8: case LargeBinary: case ListView: case LargeListView:
        cur[1] += 3; break;
      case Utf8View: case BinaryView: cur[1] += 2; cur[2]++; break;   // + variadic, added below
      case Union:
        cur[1] += ((ArrowType.Union) t).getMode() == org.apache.arrow.vector.types.UnionMode.Dense ? 2 : 1;
        break;
      default: cur[1] += 2;
    }
    for (Field c : f.getChildren()) count(c, cur);
  }

  /**
   * The vectors of the wanted top-level columns (null elsewhere) of the record batch `rb`, whose
   * body lies at bodyOffset in the file. types[i] is the Spark type column i reads as.
   */
  Vectors.Vec[] decode(RecordBatch rb, long bodyOffset, long bodyLength, List<Field> fields,
                       DataType[] types, boolean[] wanted, String where, Memory rawMem,
                       Memory decodedMem) throws IOException {
    this.rb = rb;
    this.where = where;
    long rows = rb.length();
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw bad("has " + rows + " rows; at most " + Integer.MAX_VALUE + " are supported");
    }
    int nb = rb.buffersLength();
    // vector lengths come from the bytes: each entry must lie inside the metadata (16-byte
    // nodes and buffers, 8-byte variadic counts) before anything is allocated for it
    long metadata = rb.getByteBuffer().capacity();
    if (nb < 0 || nb > metadata / 16 || rb.nodesLength() < 0 || rb.nodesLength() > metadata / 16
        || rb.variadicBufferCountsLength() < 0 || rb.variadicBufferCountsLength() > metadata / 8) {
      throw bad("claims " + rb.nodesLength() + " field nodes, " + nb + " buffers and "
          + rb.variadicBufferCountsLength() + " variadic buffer counts, more than its "
          + metadata + " bytes of metadata hold");
    }
    addr = new long[nb];
    size = new long[nb];
    int[][] starts = layout(fields, rb);
    // variadic counts: the view columns before each column, which shift buffer indices
    int[] variadicBefore = new int[fields.size() + 1];
    for (int i = 0, v = 0, extra = 0; i <= fields.size(); i++) {
      for (; v < starts[i][2]; v++) extra += variadic(v);
      variadicBefore[i] = extra;
    }
    if (starts[fields.size()][0] != rb.nodesLength()
        || starts[fields.size()][1] + variadicBefore[fields.size()] != nb) {
      throw bad("has " + rb.nodesLength() + " field nodes and " + nb + " buffers but the schema "
          + "needs " + starts[fields.size()][0] + " and " + (starts[fields.size()][1]
          + variadicBefore[fields.size()]));
    }
    // 1. the byte spans of the wanted columns' buffers, checked against the body
    List<long[]> spans = new ArrayList<>();
    long need = 0;
    for (int i = 0; i < fields.size(); i++) {
      if (!wanted[i]) continue;
      int b0 = starts[i][1] + variadicBefore[i];
      int b1 = starts[i + 1][1] + variadicBefore[i + 1];
      long lo = Long.MAX_VALUE, hi = 0;
      for (int k = b0; k < b1; k++) {
        rb.buffers(buffer, k);
        long off = buffer.offset(), len = buffer.length();
        if (off < 0 || len < 0 || off > bodyLength || len > bodyLength - off) {
          throw bad("buffer " + k + " (column '" + fields.get(i).getName() + "') at body offset "
              + off + " with " + len + " bytes ends past the body's " + bodyLength + " bytes");
        }
        if (len == 0) continue;
        lo = Math.min(lo, off);
        hi = Math.max(hi, off + len);
      }
      if (hi > lo) {
        spans.add(new long[] {lo, hi});
        need = Math.max(need, hi);
      }
    }
    spans.sort((a, b) -> Long.compare(a[0], b[0]));
    ByteBuffer rawBuf = rawMem.ensure(need, where + ": the body");
    long rawAddr = rawMem.address();
    long[] cur = null;
    List<long[]> reads = new ArrayList<>();
    for (long[] s : spans) {
      if (cur != null && s[0] <= cur[1] + COALESCE_GAP) {
        cur[1] = Math.max(cur[1], s[1]);
      } else {
        cur = s.clone();
        reads.add(cur);
      }
    }
    List<ByteBuffer> dsts = new ArrayList<>(reads.size());
    long[] offsets = new long[reads.size()];
    for (int k = 0; k < offsets.length; k++) {
      long[] r = reads.get(k);
      ByteBuffer dst = rawBuf.duplicate();
      dst.position((int) r[0]).limit((int) r[1]);
      dsts.add(dst);
      offsets[k] = bodyOffset + r[0];
      ReadStats.add(r[1] - r[0]);
    }
    file.readRanges(dsts, offsets);          // a remote input fetches them concurrently
    // 2. buffer addresses, decompressing when the body is compressed
    BodyCompression comp = rb.compression();
    int codec = comp == null ? -1 : comp.codec();
    if (codec > 1) throw bad("uses compression codec " + codec + ", which is not LZ4_FRAME or ZSTD");
    long total = 0;
    long[] claims = codec < 0 ? null : new long[nb];
    for (int i = 0; i < fields.size(); i++) {
      if (!wanted[i]) continue;
      int b0 = starts[i][1] + variadicBefore[i];
      int b1 = starts[i + 1][1] + variadicBefore[i + 1];
      for (int k = b0; k < b1; k++) {
        rb.buffers(buffer, k);
        long off = buffer.offset(), len = buffer.length();
        if (codec < 0 || len == 0) {
          addr[k] = len == 0 ? 0 : rawAddr + off;
          size[k] = len;
          continue;
        }
        if (len < 8) throw bad("compressed buffer " + k + " has " + len + " bytes, fewer than its 8-byte length prefix");
        long claim = Platform.getLong(null, rawAddr + off);
        if (claim == -1) {                       // stored uncompressed
          addr[k] = rawAddr + off + 8;
          size[k] = len - 8;
          continue;
        }
        long most = (len - 8) * Codecs.MAX_RATIO[codec] + Codecs.MAX_EXTRA[codec];
        if (claim < 0 || claim > most) {
          throw bad("compressed buffer " + k + " (column '" + fields.get(i).getName() + "') claims "
              + claim + " bytes, more than " + Codecs.name(codec) + " can produce from its "
              + (len - 8) + " bytes");
        }
        claims[k] = claim;
        total += (claim + 7) & ~7L;
      }
    }
    if (codec >= 0 && total > 0) {
      ByteBuffer out = decodedMem.ensure(total, where + ": the decompressed body");
      long outAddr = decodedMem.address();
      long pos = 0;
      for (int k = 0; k < nb; k++) {
        if (claims[k] <= 0) continue;            // not wanted, stored raw, or empty
        rb.buffers(buffer, k);
        String err = Codecs.decompress(codec, rawBuf, (int) buffer.offset() + 8,
            (int) buffer.length() - 8, out, (int) pos, (int) claims[k]);
        if (err != null) throw bad("buffer " + k + ": " + err);
        addr[k] = outAddr + pos;
        size[k] = claims[k];
        pos += (claims[k] + 7) & ~7L;
      }
    }
    // 3. vectors
    Vectors.Vec[] out = new Vectors.Vec[fields.size()];
    for (int i = 0; i < fields.size(); i++) {
      if (!wanted[i]) continue;
      int[] c = {starts[i][0], starts[i][1] + variadicBefore[i], starts[i][2]};
      out[i] = build(fields.get(i), types[i], c, "column '" + fields.get(i).getName() + "'");
    }
    return out;
  }

  private int variadic(int v) {
    if (v >= rb.variadicBufferCountsLength()) {
      throw bad("has " + rb.variadicBufferCountsLength() + " variadic buffer counts; view column "
          + (v + 1) + " needs one");
    }
    long n = rb.variadicBufferCounts(v);
    if (n < 0 || n > rb.buffersLength()) throw bad("variadic buffer count " + n + " is impossible");
    return (int) n;
  }

  IpcException bad(String what) {
    return new IpcException("arrowipc: " + where + " " + what);
  }

  /** The address of buffer k, which must hold at least `bytes` bytes. */
  private long need(int k, long bytes, String col, String what) {
    if (size[k] < bytes) {
      throw bad(col + ": its " + what + " buffer (" + k + ") has " + size[k] + " bytes but "
          + bytes + " are needed");
    }
    return addr[k];
  }

  private long validity(int k, int n, int nulls, String col) {
    return nulls == 0 ? 0 : need(k, (n + 7L) / 8, col, "validity");
  }

  private Vectors.Vec build(Field f, DataType st, int[] cur, String col) {
    if (cur[0] >= rb.nodesLength()) throw bad(col + ": no field node left");
    rb.nodes(node, cur[0]++);
    long n64 = node.length(), nulls64 = node.nullCount();
    if (n64 < 0 || n64 > Integer.MAX_VALUE || nulls64 < 0 || nulls64 > n64) {
      throw bad(col + ": field node of " + n64 + " slots with " + nulls64 + " nulls is impossible");
    }
    int n = (int) n64, nulls = (int) nulls64;
    DictionaryEncoding enc = f.getDictionary();
    if (enc != null) {
      long valid = validity(cur[1]++, n, nulls, col);
      ArrowType.Int it = enc.getIndexType();
      int w = it.getBitWidth() / 8;
      long values = need(cur[1]++, (long) n * w, col, "indices");
      Vectors.Vec dict = dictionaries.get(enc.getId());
      if (dict == null) throw bad(col + ": dictionary " + enc.getId() + " was never sent");
      Vectors.IntVec idx = new Vectors.IntVec(st, n, valid, nulls, values, w, it.getIsSigned());
      int dictNulls = 0;
      for (int i = 0; i < n; i++) {
        if (idx.isNullAt(i)) continue;
        long j = idx.getLong(i);
        if (j < 0 || j >= dict.length) {
          throw bad(col + ": index " + j + " at slot " + i + " is outside its dictionary of "
              + dict.length + " values");
        }
        if (dict.nullCount > 0 && dict.isNullAt((int) j)) dictNulls++;
      }
      return new Vectors.DictVec(st, idx, dict, nulls + dictNulls);
    }
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Null: return new Vectors.NullVec(st, n);
      case Bool: {
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.BoolVec(st, n, v, nulls, need(cur[1]++, (n + 7L) / 8, col, "values"));
      }
      case Int: {
        ArrowType.Int it = (ArrowType.Int) t;
        int w = it.getBitWidth() / 8;
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.IntVec(st, n, v, nulls, need(cur[1]++, (long) n * w, col, "values"), w,
            it.getIsSigned());
      }
      case FloatingPoint: {
        int w;
        switch (((ArrowType.FloatingPoint) t).getPrecision()) {
          case HALF: w = 2; break;
          case SINGLE: w = 4; break;
          default: w = 8;
        }
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.FloatVec(st, n, v, nulls, need(cur[1]++, (long) n * w, col, "values"), w);
      }
      case Decimal: {
        int w = ((ArrowType.Decimal) t).getBitWidth() / 8;
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.DecimalVec(st, n, v, nulls, need(cur[1]++, (long) n * w, col, "values"), w);
      }
      case Date: {
        long v = validity(cur[1]++, n, nulls, col);
        if (((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY) {
          return new Vectors.Int32Vec(st, n, v, nulls, need(cur[1]++, 4L * n, col, "values"));
        }
        return new Vectors.ScaledVec(st, n, v, nulls, need(cur[1]++, 8L * n, col, "values"), 8, 1,
            86_400_000L, true);
      }
      case Time: {
        ArrowType.Time tt = (ArrowType.Time) t;
        int w = tt.getBitWidth() / 8;
        long v = validity(cur[1]++, n, nulls, col);
        long values = need(cur[1]++, (long) n * w, col, "values");
        return new Vectors.ScaledVec(st, n, v, nulls, values, w, nanosPer(tt.getUnit()), 1, false);
      }
      case Timestamp: case Duration: {
        org.apache.arrow.vector.types.TimeUnit u = t instanceof ArrowType.Timestamp
            ? ((ArrowType.Timestamp) t).getUnit() : ((ArrowType.Duration) t).getUnit();
        long v = validity(cur[1]++, n, nulls, col);
        long values = need(cur[1]++, 8L * n, col, "values");
        long per = nanosPer(u);
        if (per == 1000) return new Vectors.LongVec(st, n, v, nulls, values);
        if (per == 1) return new Vectors.ScaledVec(st, n, v, nulls, values, 8, 1, 1000,
            t instanceof ArrowType.Timestamp);
        return new Vectors.ScaledVec(st, n, v, nulls, values, 8, per / 1000, 1, false);
      }
      case Interval: {   // day_time only: the type mapping refuses the others
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.DayTimeVec(st, n, v, nulls, need(cur[1]++, 8L * n, col, "values"));
      }
      case FixedSizeBinary: {
        int w = ((ArrowType.FixedSizeBinary) t).getByteWidth();
        long v = validity(cur[1]++, n, nulls, col);
        return new Vectors.FixedBinaryVec(st, n, v, nulls, need(cur[1]++, (long) n * w, col, "values"), w);
      }
      case Utf8: case Binary: case LargeUtf8: case LargeBinary: {
        boolean large = t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.LargeBinary;
        long v = validity(cur[1]++, n, nulls, col);
        int ko = cur[1]++, kd = cur[1]++;
        long offsets = n == 0 ? 0 : need(ko, (n + 1L) * (large ? 8 : 4), col, "offsets");
        if (n > 0) checkOffsets(offsets, n, large, size[kd], col, "its data buffer");
        if (n > 0 && !(t instanceof ArrowType.Binary || t instanceof ArrowType.LargeBinary)) {
          for (int i = 0; i < n; i++) {            // Spark takes the bytes as UTF-8 as they are
            if (v != 0 && (Platform.getByte(null, v + (i >> 3)) & (1 << (i & 7))) == 0) continue;
            long s0 = large ? Platform.getLong(null, offsets + 8L * i) : Platform.getInt(null, offsets + 4L * i);
            long s1 = large ? Platform.getLong(null, offsets + 8L * i + 8) : Platform.getInt(null, offsets + 4L * i + 4);
            checkUtf8(addr[kd] + s0, s1 - s0, i, col);
          }
        }
        return new Vectors.BinaryVec(st, n, v, nulls, offsets, addr[kd], large);
      }
      case Utf8View: case BinaryView: {
        long v = validity(cur[1]++, n, nulls, col);
        long views = need(cur[1]++, 16L * n, col, "views");
        int count = variadic(cur[2]++);
        long[] bufs = new long[count];
        long[] lens = new long[count];
        for (int j = 0; j < count; j++) {
          bufs[j] = addr[cur[1]];
          lens[j] = size[cur[1]++];
        }
        for (int i = 0; i < n; i++) {
          long at = views + 16L * i;
          int len = Platform.getInt(null, at);
          if (len < 0) throw bad(col + ": view " + i + " has length " + len);
          if (len <= 12) continue;
          int b = Platform.getInt(null, at + 8), off = Platform.getInt(null, at + 12);
          if (b < 0 || b >= count || off < 0 || len > lens[b] - off) {
            throw bad(col + ": view " + i + " (buffer " + b + ", offset " + off + ", " + len
                + " bytes) lies outside its data buffers");
          }
        }
        if (t instanceof ArrowType.Utf8View) {
          for (int i = 0; i < n; i++) {
            if (v != 0 && (Platform.getByte(null, v + (i >> 3)) & (1 << (i & 7))) == 0) continue;
            long at = views + 16L * i;
            int len = Platform.getInt(null, at);
            long data = len <= 12 ? at + 4
                : bufs[Platform.getInt(null, at + 8)] + Platform.getInt(null, at + 12);
            checkUtf8(data, len, i, col);
          }
        }
        return new Vectors.ViewVec(st, n, v, nulls, views, bufs);
      }
      case List: case LargeList: case ListView: case LargeListView: case FixedSizeList: {
        boolean large = t instanceof ArrowType.LargeList || t instanceof ArrowType.LargeListView;
        boolean view = t instanceof ArrowType.ListView || t instanceof ArrowType.LargeListView;
        long v = validity(cur[1]++, n, nulls, col);
        int w = large ? 8 : 4;
        long offsets = 0, sizes = 0;
        int fixed = 0, kind;
        if (t instanceof ArrowType.FixedSizeList) {
          fixed = ((ArrowType.FixedSizeList) t).getListSize();
          kind = Vectors.ListVec.FIXED;
        } else if (view) {
          offsets = need(cur[1]++, (long) n * w, col, "offsets");
          sizes = need(cur[1]++, (long) n * w, col, "sizes");
          kind = large ? Vectors.ListVec.LARGE_VIEW : Vectors.ListVec.VIEW;
        } else {
          int ko = cur[1]++;
          offsets = n == 0 ? 0 : need(ko, (n + 1L) * w, col, "offsets");
          kind = large ? Vectors.ListVec.LARGE : Vectors.ListVec.LIST;
        }
        Vectors.Vec child = build(f.getChildren().get(0), ((ArrayType) st).elementType(), cur,
            col + "[]");
        checkList(kind, offsets, sizes, fixed, n, v, child.length, col);
        return new Vectors.ListVec(st, n, v, nulls, kind, offsets, sizes, fixed, child);
      }
      case Map: {
        long v = validity(cur[1]++, n, nulls, col);
        int ko = cur[1]++;
        long offsets = n == 0 ? 0 : need(ko, (n + 1L) * 4, col, "offsets");
        MapType mt = (MapType) st;
        Field entries = f.getChildren().get(0);
        rb.nodes(node, cur[0]++);
        cur[1]++;                               // the entries' validity: entries are never null
        int m = (int) Math.min(node.length(), Integer.MAX_VALUE);
        Vectors.Vec keys = build(entries.getChildren().get(0), mt.keyType(), cur, col + " (key)");
        Vectors.Vec values = build(entries.getChildren().get(1), mt.valueType(), cur, col + " (value)");
        int entriesLen = Math.min(m, Math.min(keys.length, values.length));
        checkList(Vectors.ListVec.LIST, offsets, 0, 0, n, v, entriesLen, col);
        Vectors.ListVec list = new Vectors.ListVec(st, n, v, nulls, Vectors.ListVec.LIST, offsets, 0, 0, null);
        return new Vectors.MapVec(st, list, keys, values);
      }
      case Struct: {
        long v = validity(cur[1]++, n, nulls, col);
        StructType stt = (StructType) st;
        List<Field> children = f.getChildren();
        ColumnVector[] out = new ColumnVector[children.size()];
        for (int j = 0; j < children.size(); j++) {
          Vectors.Vec c = build(children.get(j), stt.fields()[j].dataType(), cur,
              col + "." + children.get(j).getName());
          if (c.length < n) throw bad(col + ": child " + j + " has " + c.length + " slots, fewer than the struct's " + n);
          out[j] = c;
        }
        return new Vectors.StructVec(st, n, v, nulls, out);
      }
      case RunEndEncoded: {
        Vectors.Vec ends = build(f.getChildren().get(0), org.apache.spark.sql.types.DataTypes.LongType,
            cur, col + " (run ends)");
        Vectors.Vec values = build(f.getChildren().get(1), st, cur, col);
        if (!(ends instanceof Vectors.IntVec) || ends.nullCount != 0) throw bad(col + ": run ends must be integers without nulls");
        Vectors.IntVec re = (Vectors.IntVec) ends;
        int runs = re.length;
        long prev = 0;
        for (int i = 0; i < runs; i++) {
          long e = re.getLong(i);
          if (e <= prev) throw bad(col + ": run end " + e + " at " + i + " does not increase");
          prev = e;
        }
        if ((n > 0 && prev < n) || values.length < runs) {
          throw bad(col + ": " + runs + " runs ending at " + prev + " do not cover " + n + " slots");
        }
        int valueNulls = 0;
        if (values.nullCount > 0) {
          long start = 0;
          for (int i = 0; i < runs && start < n; i++) {
            long e = Math.min(re.getLong(i), n);
            if (values.isNullAt(i)) valueNulls += (int) (e - start);
            start = e;
          }
        }
        return new Vectors.RunEndVec(st, n, re, runs, values, valueNulls);
      }
      default:
        throw bad(col + " has Arrow type " + SparkTypes.arrowName(t) + ", which this reader cannot decode");
    }
  }

  private static long nanosPer(org.apache.arrow.vector.types.TimeUnit u) {
    switch (u) {
      case SECOND: return 1_000_000_000L;
      case MILLISECOND: return 1_000_000L;
      case MICROSECOND: return 1_000L;
      default: return 1L;
    }
  }

  /**
   * Refuse a string value that is not valid UTF-8 (Spark would take its bytes as they are and
   * show replacement characters), as arrowipc's Python readers refuse it: "value 1 is not valid
   * UTF-8 (bad byte at offset 0 of the value)". Overlong forms, surrogates and code points past
   * U+10FFFF are invalid.
   */
  private void checkUtf8(long at, long length, int slot, String col) {
    long bad = firstInvalidUtf8(at, length);
    if (bad >= 0) {
      throw bad(col + ": value " + slot + " is not valid UTF-8 (bad byte at offset " + bad
          + " of the value)");
    }
  }

  /** The offset of the first byte of [at, at + length) that starts no valid UTF-8 sequence, or -1. */
  static long firstInvalidUtf8(long at, long length) {
    long i = 0;
    while (i < length) {
      if (length - i >= 8 && (Platform.getLong(null, at + i) & 0x8080808080808080L) == 0) {
        i += 8;                                  // eight ASCII bytes
        continue;
      }
      int b = Platform.getByte(null, at + i) & 0xFF;
      if (b < 0x80) {
        i++;
        continue;
      }
      int more;
      if (b >= 0xC2 && b <= 0xDF) more = 1;
      else if (b >= 0xE0 && b <= 0xEF) more = 2;
      else if (b >= 0xF0 && b <= 0xF4) more = 3;
      else return i;
      if (length - i <= more) return i;
      int b1 = Platform.getByte(null, at + i + 1) & 0xFF;
      if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F)      // overlong, surrogate
          || (b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F)) {  // overlong, > U+10FFFF
        return i;
      }
      for (int k = 1; k <= more; k++) {
        if ((Platform.getByte(null, at + i + k) & 0xC0) != 0x80) return i;
      }
      i += more + 1;
    }
    return -1;
  }

  private void checkOffsets(long offsets, int n, boolean large, long limit, String col, String what) {
    long prev = large ? Platform.getLong(null, offsets) : Platform.getInt(null, offsets);
    if (prev < 0) throw bad(col + ": its first offset is " + prev);
    for (int i = 1; i <= n; i++) {
      long o = large ? Platform.getLong(null, offsets + 8L * i) : Platform.getInt(null, offsets + 4L * i);
      if (o < prev) throw bad(col + ": offset " + i + " (" + o + ") is smaller than the one before (" + prev + ")");
      prev = o;
    }
    if (prev > limit) throw bad(col + ": its last offset " + prev + " is past the " + limit + " bytes of " + what);
    if (prev > Integer.MAX_VALUE) throw bad(col + ": its last offset " + prev + " is beyond 2 GiB");
  }

  private void checkList(int kind, long offsets, long sizes, int fixed, int n, long validity,
                         int childLen, String col) {
    if (n == 0) return;
    switch (kind) {
      case Vectors.ListVec.LIST: case Vectors.ListVec.LARGE:
        checkOffsets(offsets, n, kind == Vectors.ListVec.LARGE, childLen, col, "child values");
        return;
      case Vectors.ListVec.FIXED:
        if ((long) fixed * n > childLen) {
          throw bad(col + ": " + n + " lists of " + fixed + " need " + ((long) fixed * n)
              + " child values, the child has " + childLen);
        }
        return;
      default:
        boolean large = kind == Vectors.ListVec.LARGE_VIEW;
        for (int i = 0; i < n; i++) {
          if (validity != 0 && (Platform.getByte(null, validity + (i >> 3)) & (1 << (i & 7))) == 0) continue;
          long o = large ? Platform.getLong(null, offsets + 8L * i) : Platform.getInt(null, offsets + 4L * i);
          long s = large ? Platform.getLong(null, sizes + 8L * i) : Platform.getInt(null, sizes + 4L * i);
          if (o < 0 || s < 0 || o > childLen || s > childLen - o) {
            throw bad(col + ": list view " + i + " (offset " + o + ", size " + s
                + ") lies outside its " + childLen + " child values");
          }
        }
    }
  }

  static boolean[] all(int n) {
    boolean[] b = new boolean[n];
    Arrays.fill(b, true);
    return b;
  }
}
