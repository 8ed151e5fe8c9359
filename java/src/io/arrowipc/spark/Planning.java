package io.arrowipc.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Driver-side planning from footers and schemas: common schema, column matching, batch ranges. */
final class Planning {
  static final long DEFAULT_BYTES_PER_PARTITION = 128L << 20;

  private Planning() {}

  /** The schema all inputs share (read through FooterCache), else an IpcException naming two. */
  static StructType commonSchema(List<Inputs.Listed> files) {
    CommonSchema common = new CommonSchema();
    for (Inputs.Listed input : files) {
      try (IpcFile f = FooterCache.open(input)) {
        common.check(f);
      }
    }
    return common.expected;
  }

  /** The first input's Spark schema, checked against each further input's as they are opened. */
  static final class CommonSchema {
    private StructType expected;
    private String first;

    void check(IpcFile f) {
      StructType got = SparkTypes.schemaOf(f.schema, f.path);
      if (expected == null) {
        expected = got;
        first = f.path;
      } else if (!got.equals(expected)) {
        throw new IpcException("arrowipc: the schema of " + f.path + " differs from that of " + first
            + ": " + describeDifference(got, expected) + ". Read them separately, or give a schema "
            + "(DataFrameReader.schema(...) or option 'schema') to read them together");
      }
    }
  }

  static String describeDifference(StructType a, StructType b) {
    if (!java.util.Arrays.equals(a.fieldNames(), b.fieldNames())) {
      return "columns " + java.util.Arrays.toString(a.fieldNames()) + " vs "
          + java.util.Arrays.toString(b.fieldNames());
    }
    for (int i = 0; i < a.fields().length; i++) {
      if (!a.fields()[i].dataType().equals(b.fields()[i].dataType())) {
        return "column '" + a.fields()[i].name() + "' reads as " + a.fields()[i].dataType().simpleString()
            + " vs " + b.fields()[i].dataType().simpleString();
      }
    }
    return "schemas differ";
  }

  /** Whether values of Spark type `from` can be read where `to` is asked for (same or wider). */
  static boolean readableAs(DataType from, DataType to) {
    if (from.equals(to)) return true;
    if (to.equals(DataTypes.StringType)) return integralRank(from) > 0 || from.equals(DataTypes.BooleanType);
    int a = integralRank(from), b = integralRank(to);
    if (a > 0 && b > 0) return a <= b;
    return from.equals(DataTypes.FloatType) && to.equals(DataTypes.DoubleType)
        || from.equals(DataTypes.NullType);
  }

  private static int integralRank(DataType t) {
    if (t.equals(DataTypes.ByteType)) return 1;
    if (t.equals(DataTypes.ShortType)) return 2;
    if (t.equals(DataTypes.IntegerType)) return 3;
    if (t.equals(DataTypes.LongType)) return 4;
    return 0;
  }

  /**
   * For each field of `wanted`, the index of the file column feeding it (-1: the file lacks it
   * and it reads as nulls), matched by name (exactly, else ignoring case, as Spark resolves).
   */
  static int[] matchColumns(IpcFile file, StructType wanted) {
    List<Field> fields = file.schema.getFields();
    int[] out = new int[wanted.fields().length];
    for (int j = 0; j < out.length; j++) {
      StructField sf = wanted.fields()[j];
      int exact = -1, loose = -1, exactCount = 0, looseCount = 0;
      for (int i = 0; i < fields.size(); i++) {
        String n = fields.get(i).getName();
        if (n.equals(sf.name())) { exact = i; exactCount++; }
        if (n.equalsIgnoreCase(sf.name())) { loose = i; looseCount++; }
      }
      int i;
      if (exactCount == 1) {
        i = exact;
      } else if (exactCount == 0 && looseCount == 1) {
        i = loose;
      } else if (exactCount > 1 || looseCount > 1) {
        throw new IpcException("arrowipc: " + file.path + " has several columns named '" + sf.name() + "'");
      } else if (!sf.nullable()) {
        throw new IpcException("arrowipc: " + file.path + " has no column '" + sf.name()
            + "', which the given schema declares non-nullable");
      } else {
        out[j] = -1;
        continue;
      }
      Field f = fields.get(i);
      DataType got = SparkTypes.typeOf(f, "field '" + f.getName() + "' of " + file.path, true);
      if (!readableAs(got, sf.dataType())) {
        throw new IpcException("arrowipc: column '" + f.getName() + "' of " + file.path + " reads as "
            + got.simpleString() + ", which cannot be read as the " + sf.dataType().simpleString()
            + " the schema declares");
      }
      out[j] = i;
    }
    return out;
  }

  /** Consecutive [start, end) batch ranges whose rows (or bytes) stay within the target. */
  static List<int[]> group(long[] amounts, long target) {
    List<int[]> ranges = new ArrayList<>();
    int start = 0;
    long acc = 0;
    for (int i = 0; i < amounts.length; i++) {
      if (i > start && acc + amounts[i] > target) {
        ranges.add(new int[] {start, i});
        start = i;
        acc = 0;
      }
      acc += amounts[i];
    }
    if (start < amounts.length) ranges.add(new int[] {start, amounts.length});
    return ranges;
  }

  /**
   * Rows of an input: a file's from its footer's statistics summary when it has one, else from
   * its record batches' message headers; a stream's from its message headers. No body is read.
   */
  static long rows(IpcFile f) {
    com.fasterxml.jackson.databind.JsonNode summary = StatsFilter.fileSummary(f);
    if (summary != null) {
      ReadStats.fileCountedFromFooter();
      return summary.get("rows").asLong();
    }
    long total = 0;
    if (f.fileFormat) {
      for (long n : batchRows(f)) total += n;
    } else {
      total = streamRows(f);
    }
    return total;
  }

  /** Rows of a stream, from its record batches' message headers (bodies are skipped). */
  static long streamRows(IpcFile f) {
    if (f.meta.streamRows >= 0) return f.meta.streamRows;      // read by an earlier query
    long rows = 0;
    long at = f.firstMessage;
    try {
      for (IpcFile.Framed m = f.readMessage(at); m != null; m = f.readMessage(at = m.end)) {
        if (m.message.headerType() == MessageHeader.RecordBatch) {
          long n = ((RecordBatch) m.message.header(new RecordBatch())).length();
          if (n < 0) throw new IpcException("arrowipc: " + f.path + ": a record batch at byte "
              + m.bodyOffset + " claims " + n + " rows");
          rows += n;
        }
      }
    } catch (IOException e) {
      throw new IpcException("arrowipc: cannot read " + f.path + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw IpcException.corrupt(f.path + " (message at byte " + at + ")", e);
    }
    f.meta.streamRows = rows;
    return rows;
  }

  /** Rows of each record batch of a file, from the batches' metadata (bodies are not read). */
  static long[] batchRows(IpcFile f) {
    long[] known = f.meta.batchRows;                  // read by an earlier query
    if (known != null) return known;
    long[] rows = new long[f.batchBlocks.length];
    int i = 0;
    try {
      for (; i < rows.length; i++) {
        IpcFile.Framed m = f.readBlock(f.batchBlocks[i], "record batch", i);
        if (m.message.headerType() != MessageHeader.RecordBatch) {
          throw new IpcException("arrowipc: " + f.path + ": block " + i + " is not a record batch");
        }
        rows[i] = ((RecordBatch) m.message.header(new RecordBatch())).length();
      }
    } catch (IOException e) {
      throw new IpcException("arrowipc: cannot read " + f.path + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw IpcException.corrupt(f.path + " (record batch " + i + " at byte "
          + f.batchBlocks[i][0] + ")", e);
    }
    f.meta.batchRows = rows;
    return rows;
  }
}
