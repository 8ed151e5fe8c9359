package io.arrowipc.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.vectorized.ColumnVectorUtils;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The arrowipc source as a Spark file format (ArrowIpcDataSource's FileFormat side): what Spark's
 * own file sources give partitioned tables comes from Spark here — hive-style col=value
 * directories with Spark's escaping and __HIVE_DEFAULT_PARTITION__, partition discovery and type
 * inference, basePath, partition pruning before any file is opened, dynamic partition overwrite,
 * maxRecordsPerFile, the commit protocol and catalog tables. This class supplies the files:
 * their schema, a writer per output file, and a reader per input file that returns columnar
 * batches with the partition values as constant columns, skips files and batches by their
 * statistics, and answers a query that needs no column (count(*)) from the footer alone.
 */
final class PartitionedFiles {
  private PartitionedFiles() {}

  /**
   * Whether a read or write of these options is one for the file format: a partitioned write,
   * option basePath, or a load path holding col=value directories (the V2 scan reads the files
   * of a directory, not of its subdirectories).
   */
  static boolean forFileFormat(Map<String, String> options) {
    if (Options.get(options, "basePath") != null) return true;
    for (String path : ArrowIpcDataSource.paths(options)) {
      if (hasPartitionDirectories(path)) return true;
    }
    return false;
  }

  /**
   * Spark's discovery of the layout under the load paths: the relation its file source would
   * read (data columns from the files' footers, partition columns and their inferred types).
   */
  static org.apache.spark.sql.execution.datasources.HadoopFsRelation discover(Map<String, String> options) {
    Map<String, String> rest = new java.util.HashMap<>(options);
    rest.remove("path");
    rest.remove("paths");
    scala.collection.immutable.Seq<String> paths = scala.jdk.javaapi.CollectionConverters.asScala(
        ArrowIpcDataSource.paths(options)).toList();
    org.apache.spark.sql.execution.datasources.DataSource source =
        new org.apache.spark.sql.execution.datasources.DataSource(
            org.apache.spark.sql.SparkSession.active(), ArrowIpcDataSource.class.getName(), paths,
            scala.Option.empty(), scala.collection.immutable.List$.MODULE$.empty(), scala.Option.empty(),
            scala.collection.immutable.Map$.MODULE$.from(scala.jdk.javaapi.CollectionConverters.asScala(rest)),
            scala.Option.empty(), scala.Option.empty());
    return (org.apache.spark.sql.execution.datasources.HadoopFsRelation)
        source.resolveRelation(true, false, false);
  }

  /** A name Spark reads as a partition directory: col=value, not hidden (_ or . first). */
  static boolean isPartitionName(String name) {
    return !name.startsWith("_") && !name.startsWith(".") && name.indexOf('=') > 0;
  }

  private static boolean hasPartitionDirectories(String path) {
    if (path.isEmpty() || path.matches(".*[*?\\[{].*")) return false;   // globs name files
    String scheme = Source.scheme(path);
    if (Source.isHttp(scheme)) return false;
    if (scheme == null) {
      java.io.File[] dirs = new java.io.File(path).listFiles(java.io.File::isDirectory);
      if (dirs == null) return false;
      for (java.io.File d : dirs) if (isPartitionName(d.getName())) return true;
      return false;
    }
    try {
      FileSystem fs = Source.hadoopFileSystem(path, HadoopConf.get());
      Path p = new Path(path);
      if (!fs.exists(p) || !fs.getFileStatus(p).isDirectory()) return false;
      for (FileStatus st : fs.listStatus(p)) {
        if (st.isDirectory() && isPartitionName(st.getPath().getName())) return true;
      }
      return false;
    } catch (IOException | IllegalArgumentException e) {
      throw new IpcException("arrowipc: cannot list " + path + ": " + e, e);
    }
  }

  /**
   * The read option schema (a DDL string), or null. On the file format it stands for the user's
   * schema: its columns and types, in its order; a partition column it names keeps its position.
   */
  static StructType schemaOption(scala.collection.immutable.Map<String, String> options) {
    scala.Option<String> ddl = options.get("schema");     // Spark's options are case-insensitive
    if (ddl.isEmpty() || ddl.get().trim().isEmpty()) return null;
    return StructType.fromDDL(ddl.get());
  }

  /**
   * Spark types partition columns before the file format sees option schema (only a
   * DataFrameReader.schema(...) reaches its partition discovery): a partition column the option
   * types otherwise than Spark inferred it fails rather than read as the other type.
   */
  static void checkPartitionTypes(StructType given, StructType partitionSchema) {
    if (given == null) return;
    for (StructField p : partitionSchema.fields()) {
      for (StructField f : given.fields()) {
        if (f.name().equalsIgnoreCase(p.name()) && !f.dataType().equals(p.dataType())) {
          throw new IpcException("arrowipc: option schema declares partition column '" + f.name()
              + "' as " + f.dataType().simpleString() + ", but Spark inferred "
              + p.dataType().simpleString() + " from its directories; give the schema with "
              + "DataFrameReader.schema(...), which types partition columns, or leave the column "
              + "out of the option");
        }
      }
    }
  }

  /** The common schema of the data files Spark listed (None: there are none). */
  static scala.Option<StructType> inferSchema(scala.collection.immutable.Seq<FileStatus> files) {
    List<Inputs.Listed> data = new ArrayList<>();
    scala.collection.Iterator<FileStatus> it = files.iterator();
    while (it.hasNext()) {
      FileStatus st = it.next();
      if (st.isFile() && Inputs.isDataName(st.getPath().getName())) data.add(Inputs.Listed.of(st));
    }
    if (data.isEmpty()) return scala.Option.empty();
    data.sort(java.util.Comparator.comparing(l -> l.path));
    return scala.Option.apply(Planning.commonSchema(data));
  }

  /** A path IpcFile opens: a file: URI as a local path (java.nio), others as they are. */
  static String inputPath(Path p) {
    java.net.URI uri = p.toUri();
    if ("file".equals(uri.getScheme()) || uri.getScheme() == null) return uri.getPath();
    return p.toString();
  }

  // ---- writing ----

  /** Creates one writer per output file Spark's FileFormatWriter opens (tasks, on executors). */
  static final class WriterFactory extends OutputWriterFactory {
    private static final long serialVersionUID = 1L;
    private final ArrowIpcWriteBuilder.FileSettings settings;
    private final String jobId = UUID.randomUUID().toString().replace("-", "");

    WriterFactory(Map<String, String> options) {
      this.settings = new ArrowIpcWriteBuilder.FileSettings(options);
    }

    @Override
    public String getFileExtension(TaskAttemptContext context) {
      return settings.extension;
    }

    @Override
    public OutputWriter newInstance(String path, StructType dataSchema, TaskAttemptContext context) {
      return new FileWriter(path, dataSchema, settings, jobId, context.getConfiguration());
    }
  }

  /** One output file: rows gathered into record batches of rowsPerBatch. */
  static final class FileWriter extends OutputWriter {
    private final String path;
    private final ArrowIpcWriteBuilder.FileSettings settings;
    private final BufferAllocator alloc;
    private final VectorSchemaRoot root;
    private final org.apache.spark.sql.execution.arrow.ArrowWriter rows;
    private final OutputStream out;
    private final ArrowWriter writer;
    private int pending;

    FileWriter(String path, StructType schema, ArrowIpcWriteBuilder.FileSettings settings,
               String jobId, Configuration conf) {
      this.path = path;
      this.settings = settings;
      this.alloc = ArrowUtils.rootAllocator().newChildAllocator("arrowipc-write-" + path, 0, Long.MAX_VALUE);
      boolean ok = false;
      VectorSchemaRoot r = null;
      OutputStream o = null;
      try {
        r = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(schema, "UTC", true, false, false), alloc);
        Path p = new Path(path);
        FileSystem fs = p.getFileSystem(conf);
        // file: is a checksummed file system: its .crc sidecars are of no use to IPC files
        if (fs instanceof ChecksumFileSystem) fs = ((ChecksumFileSystem) fs).getRawFileSystem();
        o = fs.create(p, false);
        this.root = r;
        this.out = o;
        this.rows = org.apache.spark.sql.execution.arrow.ArrowWriter.create(r);
        // started at once: a task with no rows still leaves a file holding the schema
        this.writer = ArrowIpcWriteBuilder.TaskWriter.open(r, Channels.newChannel(o), settings.stream,
            settings.statistics, settings.codec, jobId);
        writer.start();
        ok = true;
      } catch (IOException e) {
        throw new IpcException("arrowipc: cannot write " + path + ": " + e, e);
      } finally {
        if (!ok) {
          try {
            if (o != null) o.close();
          } catch (IOException ignored) {
            // the task fails with the first error
          }
          if (r != null) r.close();
          alloc.close();
        }
      }
    }

    @Override
    public void write(InternalRow row) {
      rows.write(row);
      if (++pending == settings.rowsPerBatch) flush();
    }

    private void flush() {
      rows.finish();
      try {
        writer.writeBatch();
      } catch (IOException e) {
        throw new IpcException("arrowipc: cannot write " + path + ": " + e, e);
      }
      rows.reset();
      pending = 0;
    }

    @Override
    public void close() {
      try {
        if (pending > 0) flush();
        writer.end();
        writer.close();
        out.close();
      } catch (IOException e) {
        throw new IpcException("arrowipc: cannot write " + path + ": " + e, e);
      } finally {
        root.close();
        alloc.close();
      }
    }

    @Override
    public String path() {
      return path;
    }
  }

  // ---- reading ----

  /**
   * Reads one file of a scan (on executors): Spark has already left out the files of partitions
   * the query's partition filters rule out; this skips a file whose footer statistics rule out
   * the data filters, then its batches by theirs, and appends the partition values as constant
   * columns. A scan of no column (count(*)) reads the footer only.
   */
  static final class Reader extends scala.runtime.AbstractFunction1<PartitionedFile,
      scala.collection.Iterator<InternalRow>> implements Serializable {
    private static final long serialVersionUID = 1L;
    private final StructType required;
    private final StructType partitionSchema;
    private final Filter[] filters;
    private final HadoopConf.Shipped conf;

    Reader(StructType required, StructType partitionSchema, Filter[] filters, Configuration conf) {
      this.required = required;
      this.partitionSchema = partitionSchema;
      List<Filter> usable = new ArrayList<>();
      for (Filter f : filters) if (StatsFilter.usable(f)) usable.add(f);
      this.filters = usable.toArray(new Filter[0]);
      this.conf = new HadoopConf.Shipped(conf);
    }

    @Override
    @SuppressWarnings("unchecked")
    public scala.collection.Iterator<InternalRow> apply(PartitionedFile file) {
      Path p = file.toPath();
      if (!Inputs.isDataName(p.getName())) {
        return scala.collection.Iterator$.MODULE$.empty();   // not an IPC file: as the V2 scan lists
      }
      String path = inputPath(p);
      IpcFile f = IpcFile.open(path, conf.value());
      ReadStats.fileOpened();
      Batches batches;
      try {
        StatsFilter stats = StatsFilter.of(filters, f.schema.getFields());
        if (f.fileFormat && stats != null) {
          com.fasterxml.jackson.databind.JsonNode summary = StatsFilter.fileSummary(f);
          if (summary != null && !stats.mightMatch(summary)) {
            ReadStats.fileSkipped();
            f.close();
            return scala.collection.Iterator$.MODULE$.empty();
          }
        }
        if (required.fields().length == 0) {
          long rows = Planning.rows(f);
          f.close();
          batches = new Batches(null, rows, file.partitionValues(), partitionSchema);
        } else {
          int[] columns = Planning.matchColumns(f, required);
          IpcPartition part = new IpcPartition(path, f.fileFormat, 0,
              f.fileFormat ? f.batchBlocks.length : -1, columns);
          batches = new Batches(new IpcPartitionReader(part, required, filters, f), 0,
              file.partitionValues(), partitionSchema);
        }
      } catch (RuntimeException e) {
        f.close();
        throw e;
      }
      TaskContext task = TaskContext.get();
      if (task != null) {
        task.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) t -> batches.close());
      }
      // Spark's file scan takes columnar batches through its row iterator's type
      return (scala.collection.Iterator<InternalRow>) (scala.collection.Iterator<?>) batches;
    }
  }

  /** A file's batches, each with the partition values appended as constant columns. */
  static final class Batches extends scala.collection.AbstractIterator<ColumnarBatch> {
    private final IpcPartitionReader reader;     // null: a count from the footer, no column
    private long footerRows;
    private final InternalRow partitionValues;
    private final StructType partitionSchema;
    private Boolean ready;
    private boolean closed;

    Batches(IpcPartitionReader reader, long footerRows, InternalRow partitionValues,
            StructType partitionSchema) {
      this.reader = reader;
      this.footerRows = footerRows;
      this.partitionValues = partitionValues;
      this.partitionSchema = partitionSchema;
    }

    @Override
    public boolean hasNext() {
      if (ready == null) {
        try {
          ready = reader == null ? footerRows > 0 : reader.next();
        } catch (IOException e) {
          throw new IpcException("arrowipc: " + e.getMessage(), e);
        }
        if (!ready) close();
      }
      return ready;
    }

    @Override
    public ColumnarBatch next() {
      if (!hasNext()) throw new java.util.NoSuchElementException();
      ready = null;
      ColumnarBatch data;
      if (reader == null) {
        int n = (int) Math.min(footerRows, Integer.MAX_VALUE);
        footerRows -= n;
        data = new ColumnarBatch(new ColumnVector[0], n);
      } else {
        data = reader.get();
      }
      int rows = data.numRows();
      StructField[] pf = partitionSchema.fields();
      ColumnVector[] out = new ColumnVector[data.numCols() + pf.length];
      for (int i = 0; i < data.numCols(); i++) out[i] = data.column(i);
      for (int i = 0; i < pf.length; i++) {
        ConstantColumnVector c = new ConstantColumnVector(rows, pf[i].dataType());
        ColumnVectorUtils.populate(c, partitionValues, i);
        out[data.numCols() + i] = c;
      }
      return new ColumnarBatch(out, rows);
    }

    void close() {
      if (closed) return;
      closed = true;
      if (reader != null) reader.close();
    }
  }
}
