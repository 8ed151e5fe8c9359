package io.arrowipc.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * Writing with Spark's commit protocol, as the Python source does (arrowipc/spark/commit.py):
 * tasks write under root/_temporary/job/attempt-id/, job commit moves the reported files into
 * root (overwrite drops the old entries only then) and writes _SUCCESS, abort removes the job's
 * directory (and the root when the job created it and it is empty). The root is a local path or
 * a URI of a Hadoop FileSystem (Outputs); the protocol is the same on both.
 */
final class ArrowIpcWriteBuilder implements WriteBuilder, SupportsTruncate {
  static final String TEMPORARY = "_temporary";
  private final StructType schema;
  private final Map<String, String> options;
  private boolean overwrite;

  ArrowIpcWriteBuilder(StructType schema, Map<String, String> options) {
    this.schema = schema;
    this.options = options;
  }

  @Override
  public WriteBuilder truncate() {
    overwrite = true;
    return this;
  }

  @Override
  public Write build() {
    return new Write() {
      @Override
      public BatchWrite toBatch() {
        return new Job(schema, options, overwrite);
      }
    };
  }

  /** How each file is written (options compression, format, rowsPerBatch, statistics). */
  static final class FileSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    final CompressionUtil.CodecType codec;
    final boolean stream;
    final String extension;
    final int rowsPerBatch;
    final boolean statistics;

    FileSettings(Map<String, String> options) {
      String compression = String.valueOf(Settings.opt(options, "compression", "none")).toLowerCase(Locale.ROOT);
      switch (compression) {
        case "none": case "uncompressed": codec = CompressionUtil.CodecType.NO_COMPRESSION; break;
        case "lz4": case "lz4_frame": codec = CompressionUtil.CodecType.LZ4_FRAME; break;
        case "zstd": codec = CompressionUtil.CodecType.ZSTD; break;
        default: throw new IpcException("arrowipc: option compression must be none, lz4 or zstd; got '"
            + compression + "'");
      }
      String fmt = Settings.opt(options, "format", "file").toLowerCase(Locale.ROOT);
      if (!fmt.equals("file") && !fmt.equals("stream")) {
        throw new IpcException("arrowipc: option format must be file or stream; got '" + fmt + "'");
      }
      this.stream = fmt.equals("stream");
      this.extension = stream ? ".arrows" : ".arrow";
      this.rowsPerBatch = Options.count(Settings.opt(options, "rowsPerBatch", "65536"), "rowsPerBatch");
      String stats = Settings.opt(options, "statistics", "true").toLowerCase(Locale.ROOT);
      if (!stats.equals("true") && !stats.equals("false")) {
        throw new IpcException("arrowipc: option statistics must be true or false; got '" + stats + "'");
      }
      this.statistics = stats.equals("true");
    }
  }

  /** Settings every task needs (serialized to the executors). */
  static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;
    final Outputs out;
    final String root;
    final String jobId;
    final String extension;
    final boolean stream;
    final CompressionUtil.CodecType codec;
    final int rowsPerBatch;
    final boolean statistics;
    final boolean durable;
    final StructType schema;

    Settings(StructType schema, Map<String, String> options) {
      String path = Options.get(options, "path");
      if (path == null || path.isEmpty()) throw new IpcException("arrowipc: no output path; use .save(path)");
      this.jobId = UUID.randomUUID().toString().replace("-", "");
      FileSettings file = new FileSettings(options);
      this.codec = file.codec;
      this.stream = file.stream;
      this.extension = file.extension;
      this.rowsPerBatch = file.rowsPerBatch;
      this.statistics = file.statistics;
      String durable = opt(options, "durable", "false").toLowerCase(Locale.ROOT);
      if (!durable.equals("true") && !durable.equals("false")) {
        throw new IpcException("arrowipc: option durable must be true or false; got '" + durable + "'");
      }
      this.durable = durable.equals("true");
      this.schema = schema;
      this.out = Outputs.of(path, this.durable);
      this.root = out.root;
    }

    static String opt(Map<String, String> o, String k, String dflt) {
      String v = Options.get(o, k);
      return v == null ? dflt : v;
    }

    String temporary() {
      return out.child(root, TEMPORARY);
    }

    String jobDir() {
      return out.child(temporary(), jobId);
    }
  }

  static final class Committed implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final String tempPath;
    final String name;
    final long rows;

    Committed(String tempPath, String name, long rows) {
      this.tempPath = tempPath;
      this.name = name;
      this.rows = rows;
    }
  }

  static final class Job implements BatchWrite {
    private final Settings s;
    private final boolean overwrite;
    private final boolean rootExisted;

    Job(StructType schema, Map<String, String> options, boolean overwrite) {
      this.s = new Settings(schema, options);
      this.overwrite = overwrite;
      this.rootExisted = s.out.isDirectory(s.root);
      dropAbandonedJobs(s.out, s.temporary());
      if (!s.out.mkdirs(s.jobDir())) {
        throw new IpcException("arrowipc: cannot create " + s.jobDir());
      }
      String driver = s.out.child(s.jobDir(), DRIVER);
      try (OutputStream o = s.out.create(driver)) {
        o.write((host() + " " + ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new IpcException("arrowipc: cannot write " + driver + ": " + e, e);
      }
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new TaskFactory(s);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      List<String[]> written = new ArrayList<>();
      long rows = 0;
      for (WriterCommitMessage m : messages) {
        if (m instanceof Committed && ((Committed) m).tempPath != null) {
          Committed c = (Committed) m;
          written.add(new String[] {c.tempPath, c.name});
          rows += c.rows;
        }
      }
      try {
        if (written.isEmpty()) written.add(emptyFile());
        Outputs out = s.out;
        out.mkdirs(s.root);
        Set<String> old = new HashSet<>();
        if (overwrite) {
          for (String n : out.list(s.root)) if (!n.equals(TEMPORARY)) old.add(n);
        }
        Set<String> fresh = new HashSet<>();
        for (String[] w : written) {
          out.move(w[0], out.child(s.root, w[1]));
          fresh.add(w[1]);
        }
        if (s.durable) out.syncDirectory(s.root);   // the renames, before old files go
        for (String n : old) if (!fresh.contains(n)) out.remove(out.child(s.root, n));
        dropJobDir();
        List<String> sorted = new ArrayList<>(fresh);
        sorted.sort(null);
        StringBuilder json = new StringBuilder("{\n \"rows\": ").append(rows)
            .append(",\n \"mode\": \"").append(overwrite ? "overwrite" : "append")
            .append("\",\n \"job\": \"").append(s.jobId).append("\",\n \"writer\": \"arrowipc.spark.jvm\",\n \"files\": [");
        for (int i = 0; i < sorted.size(); i++) {
          json.append(i == 0 ? "\n  \"" : ",\n  \"").append(sorted.get(i)).append('"');
        }
        json.append("\n ]\n}\n");
        try (OutputStream o = out.create(out.child(s.root, "_SUCCESS"))) {
          o.write(json.toString().getBytes(StandardCharsets.UTF_8));
          if (s.durable) out.sync(o);
        }
        if (s.durable) out.syncDirectory(s.root);
      } catch (IOException e) {
        throw new IpcException("arrowipc: committing the write to " + s.root + " failed: " + e, e);
      }
    }

    /** A schema-only file, so that reading an empty result back still finds its schema. */
    private String[] emptyFile() throws IOException {
      String dir = s.out.child(s.jobDir(), "attempt-0");
      s.out.mkdirs(dir);
      String name = String.format("part-%05d-%s%s", 0, s.jobId, s.extension);
      String f = s.out.child(dir, name);
      try (BufferAllocator alloc = ArrowUtils.rootAllocator().newChildAllocator("arrowipc-empty", 0, Long.MAX_VALUE);
           VectorSchemaRoot root = VectorSchemaRoot.create(
               ArrowUtils.toArrowSchema(s.schema, "UTC", true, false, false), alloc);
           OutputStream out = s.out.create(f);
           ArrowWriter w = TaskWriter.open(root, s.out.channel(out), s)) {
        w.start();
        w.end();
      }
      return new String[] {f, name};
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      dropJobDir();
      if (!rootExisted) s.out.removeIfEmpty(s.root);
    }

    private void dropJobDir() {
      for (int i = 0; i < 5 && s.out.exists(s.jobDir()); i++) s.out.remove(s.jobDir());
      s.out.removeIfEmpty(s.temporary());               // only when no other job uses it
    }
  }

  /** Names the driver (host and process id) of a job in its temporary directory. */
  static final String DRIVER = "_driver";

  private static String host() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }

  /**
   * Remove the temporary directories of jobs whose driver died on this host (killed during a
   * write, it could neither commit nor abort): their driver file names this host and a process
   * that no longer runs. Jobs of other hosts, or without a driver file, are left alone.
   */
  static void dropAbandonedJobs(Outputs out, String temporary) {
    String here = host();
    for (String name : out.listDirectories(temporary)) {
      String job = out.child(temporary, name);
      try {
        String[] owner = new String(out.readAll(out.child(job, DRIVER)),
            StandardCharsets.UTF_8).trim().split(" ");
        if (owner.length == 2 && owner[0].equals(here)
            && !ProcessHandle.of(Long.parseLong(owner[1])).isPresent()) {
          out.remove(job);
        }
      } catch (IOException | NumberFormatException e) {
        // no driver file (yet): not ours to judge
      }
    }
  }

  static final class TaskFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final Settings s;

    TaskFactory(Settings s) {
      this.s = s;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new TaskWriter(s, partitionId, taskId);
    }
  }

  /** One task's file: rows gathered into batches of rowsPerBatch, written as they fill. */
  static final class TaskWriter implements DataWriter<InternalRow> {
    private final Settings s;
    private final String file;
    private final String name;
    private final BufferAllocator alloc;
    private final VectorSchemaRoot root;
    private final org.apache.spark.sql.execution.arrow.ArrowWriter rows;
    private OutputStream out;
    private ArrowWriter writer;
    private int pending;
    private long total;

    TaskWriter(Settings s, int partitionId, long taskId) {
      this.s = s;
      String dir = s.out.child(s.jobDir(), "attempt-" + taskId);
      // The job's directory holds the driver file from setup until commit or abort removes the
      // whole tree; a task makes only its own directory and files, never their parents.
      if (!s.out.mkdir(dir) || !s.out.exists(s.out.child(s.jobDir(), DRIVER))) {
        // aborted meanwhile (a Hadoop mkdirs may just have made the job's directory again)
        s.out.remove(dir);
        s.out.removeIfEmpty(s.jobDir());
        s.out.removeIfEmpty(s.temporary());
        throw new IpcException("arrowipc: the write job " + s.jobId + " was aborted (its directory "
            + s.jobDir() + " is gone); this task writes nothing");
      }
      this.name = String.format("part-%05d-%s%s", partitionId, s.jobId, s.extension);
      this.file = s.out.child(dir, name);
      this.alloc = ArrowUtils.rootAllocator().newChildAllocator("arrowipc-write-" + taskId, 0, Long.MAX_VALUE);
      this.root = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(s.schema, "UTC", true, false, false), alloc);
      this.rows = org.apache.spark.sql.execution.arrow.ArrowWriter.create(root);
    }

    static ArrowWriter open(VectorSchemaRoot root, WritableByteChannel ch, Settings s) {
      return open(root, ch, s.stream, s.statistics, s.codec, s.jobId);
    }

    static ArrowWriter open(VectorSchemaRoot root, WritableByteChannel ch, boolean stream,
                            boolean statistics, CompressionUtil.CodecType codec, String jobId) {
      Map<String, String> meta = new HashMap<>();
      meta.put("writer", "arrowipc.spark.jvm");
      meta.put("spark.job", jobId);
      if (statistics) return StatsWriters.open(root, ch, stream, meta, BodyCodec.FACTORY, codec);
      if (stream) {
        return new ArrowStreamWriter(root, null, ch, IpcOption.DEFAULT, BodyCodec.FACTORY, codec);
      }
      return new ArrowFileWriter(root, null, ch, meta, IpcOption.DEFAULT, BodyCodec.FACTORY, codec);
    }

    @Override
    public void write(InternalRow row) throws IOException {
      if (writer == null) {
        out = s.out.create(file);
        writer = open(root, s.out.channel(out), s);
        writer.start();
      }
      rows.write(row);
      if (++pending == s.rowsPerBatch) flush();
    }

    private void flush() throws IOException {
      rows.finish();
      writer.writeBatch();
      rows.reset();
      total += pending;
      pending = 0;
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
      if (writer == null) return new Committed(null, null, 0);   // an empty task writes no file
      if (pending > 0) flush();
      writer.end();
      if (s.durable) s.out.sync(out);
      writer.close();
      out.close();
      return new Committed(file, name, total);
    }

    @Override
    public void abort() {
      try {
        if (writer != null) writer.close();
        if (out != null) out.close();
      } catch (IOException | RuntimeException ignored) {
        // the file goes anyway
      }
      s.out.remove(file);
    }

    @Override
    public void close() {
      root.close();
      alloc.close();
    }
  }
}
