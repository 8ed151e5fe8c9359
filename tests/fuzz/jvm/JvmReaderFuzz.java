package io.arrowipc.spark;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A mutation fuzzer for the JVM data source's reader, without Spark: each mutant of a seed
 * file goes through what a Spark scan does with an input (footer or schema message, Spark
 * schema, row counts, statistics summary, then every record batch through IpcPartitionReader
 * with every value of every row copied out as Spark would read it).
 *
 * <p>A clean read and an IpcException naming the file are the only acceptable outcomes; any
 * other exception or error (IndexOutOfBoundsException, NullPointerException, an IpcException
 * without the file's name ...) is a finding: printed with its stack and the mutant kept as
 * finding-N.bin in the output directory. A JVM crash or hang shows in the exit status or the
 * driver's timeout (tests/fuzz/jvm_fuzz.py); mutant.bin and index.txt then hold the input being
 * read and its index.
 *
 * <p>Mutants are deterministic functions of (seed file, index).
 *
 * <pre>java -cp ... io.arrowipc.spark.JvmReaderFuzz OUT_DIR START COUNT SECONDS SEED_FILE...</pre>
 * COUNT 0 runs until SECONDS have passed; COUNT -1 reads the seeds unmutated, which must succeed. The last line printed is
 * "executions N clean C errors E findings F".
 */
public final class JvmReaderFuzz {
  private static final int[] BOUNDARY = {0, 1, -1, 7, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF,
      0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x10000, 1 << 20, 1 << 30};

  private JvmReaderFuzz() {}

  public static void main(String[] args) throws IOException {
    Path out = Paths.get(args[0]);
    long start = Long.parseLong(args[1]);
    long count = Long.parseLong(args[2]);
    double seconds = Double.parseDouble(args[3]);
    List<byte[]> seeds = new ArrayList<>();
    for (int i = 4; i < args.length; i++) seeds.add(Files.readAllBytes(Paths.get(args[i])));
    Files.createDirectories(out);
    if (count < 0) {                             // check the seeds themselves read cleanly
      for (int i = 4; i < args.length; i++) exercise(Paths.get(args[i]).toAbsolutePath().toString());
      System.out.println("seeds read");
      return;
    }
    Path mutant = out.resolve("mutant.bin");
    Path current = out.resolve("index.txt");
    String name = mutant.toAbsolutePath().toString();
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    long runs = 0, clean = 0, errors = 0, findings = 0;
    for (long index = start; count == 0 || index < start + count; index++) {
      if (count == 0 && System.nanoTime() > deadline) break;
      int which = (int) (index % seeds.size());
      byte[] data = mutate(seeds.get(which), index);
      Files.write(mutant, data);                  // what a crash leaves behind, with its index
      Files.write(current, Long.toString(index).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      runs++;
      try {
        exercise(name);
        clean++;
      } catch (IpcException e) {
        if (e.getMessage() != null && e.getMessage().contains(name)) {
          errors++;
          continue;
        }
        findings++;
        report(out, findings, which, index, data, e);
      } catch (Throwable e) {        // anything else is what this fuzzer looks for
        findings++;
        report(out, findings, which, index, data, e);
      }
    }
    System.out.println("executions " + runs + " clean " + clean + " errors " + errors
        + " findings " + findings);
  }

  private static void report(Path out, long n, int seed, long index, byte[] data, Throwable e)
      throws IOException {
    StringWriter trace = new StringWriter();
    e.printStackTrace(new PrintWriter(trace));
    Files.write(out.resolve("finding-" + n + ".bin"), data);
    System.out.println("FINDING seed " + seed + " index " + index + ": " + trace);
  }

  /** What a scan of the input does, values included. */
  static void exercise(String path) throws IOException {
    StructType schema;
    int[] columns;
    int batches;
    boolean fileFormat;
    try (IpcFile f = IpcFile.open(path, null)) {
      schema = SparkTypes.schemaOf(f.schema, path);
      columns = Planning.matchColumns(f, schema);
      Planning.rows(f);
      if (f.fileFormat) {
        JsonNode summary = StatsFilter.fileSummary(f);
        if (summary != null) StatsFilter.batchRows(summary);
      }
      fileFormat = f.fileFormat;
      batches = f.fileFormat ? f.batchBlocks.length : -1;
    }
    IpcPartition part = new IpcPartition(path, fileFormat, 0, batches, columns);
    IpcPartitionReader reader = new IpcPartitionReader(part, schema, new Filter[0], (org.apache.hadoop.conf.Configuration) null);
    try {
      while (reader.next()) {
        ColumnarBatch b = reader.get();
        for (int r = 0; r < b.numRows(); r++) {
          InternalRow row = b.getRow(r).copy();    // every value, as Spark reads it
          row.numFields();
        }
      }
    } finally {
      reader.close();
    }
  }

  /** Mutant `index` of `seed`: 1 to 4 edits, half of them in the 512 bytes after a message's
   * continuation marker (prefixes, metadata, nodes, buffers), integers set to boundary values. */
  static byte[] mutate(byte[] seed, long index) {
    SplittableRandom rnd = new SplittableRandom(index * 0x9E3779B97F4A7C15L + seed.length);
    byte[] d = seed.clone();
    List<Integer> markers = new ArrayList<>();
    for (int i = 0; i + 4 <= d.length; i += 8) {
      if (d[i] == -1 && d[i + 1] == -1 && d[i + 2] == -1 && d[i + 3] == -1) markers.add(i);
    }
    int edits = 1 + rnd.nextInt(4);
    for (int e = 0; e < edits; e++) {
      if (d.length == 0) break;
      int at;
      if (!markers.isEmpty() && rnd.nextBoolean()) {
        at = Math.min(d.length - 1, markers.get(rnd.nextInt(markers.size())) + rnd.nextInt(512));
      } else {
        at = rnd.nextInt(d.length);
      }
      switch (rnd.nextInt(6)) {
        case 0:
          d[at] ^= (byte) (1 << rnd.nextInt(8));
          break;
        case 1:
          d[at] = (byte) rnd.nextInt(256);
          break;
        case 2: {
          int aligned = at & ~3;
          if (aligned + 4 <= d.length) {
            int v = BOUNDARY[rnd.nextInt(BOUNDARY.length)] + (rnd.nextInt(3) - 1);
            for (int k = 0; k < 4; k++) d[aligned + k] = (byte) (v >>> (8 * k));
          }
          break;
        }
        case 3: {
          int aligned = at & ~7;
          if (aligned + 8 <= d.length) {
            long v = rnd.nextBoolean() ? Long.MAX_VALUE : rnd.nextLong();
            for (int k = 0; k < 8; k++) d[aligned + k] = (byte) (v >>> (8 * k));
          }
          break;
        }
        case 4:                                   // cut the input
          d = java.util.Arrays.copyOf(d, at);
          break;
        default: {                                // a byte with its top bit set (UTF-8)
          d[at] = (byte) (0x80 | rnd.nextInt(128));
        }
      }
    }
    return d;
  }
}
