package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.mapreduce.Job;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The "arrowipc" Spark data source on the JVM (DataSource V2): Arrow IPC files (.arrow, .feather;
 * magic ARROW1 or ALKAID1) and streams (.arrows) read as columnar batches, and written with
 * Spark's commit protocol.
 *
 * <pre>
 *   spark.read.format("arrowipc").load("events/")
 *   df.write.format("arrowipc").mode("overwrite").option("compression", "zstd").save("out/")
 * </pre>
 *
 * Read options: path (file, directory or glob), schema (DDL), rowsPerPartition or
 * bytesPerPartition (default 128m). Write options: compression (none, lz4, zstd), format (file,
 * stream), rowsPerBatch (65536), statistics (true). Save modes: append and overwrite.
 * spark.readStream over a directory files arrive in (ArrowIpcMicroBatchStream): options
 * maxFilesPerTrigger, latestFirst (false).
 *
 * <p>It is also a Spark FileFormat (PartitionedFiles), which Spark uses where the table has no
 * V2 batch read or write: partitioned writes (partitionBy), reads of directories holding col=value
 * directories or with option basePath, and catalog tables (CREATE TABLE ... USING arrowipc).
 * Spark then does what it does for Parquet: partition directories and their discovery, pruning,
 * dynamic partition overwrite, maxRecordsPerFile, its commit protocol.
 */
public class ArrowIpcDataSource implements TableProvider, DataSourceRegister, FileFormat {
  static final String SHORT_NAME = "arrowipc";
  private boolean inferred;

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  static List<String> paths(Map<String, String> options) {
    List<String> out = new ArrayList<>();
    String path = Options.get(options, "path");
    if (path != null) out.add(path);
    String many = Options.get(options, "paths");
    if (many != null && many.startsWith("[")) {   // DataFrameReader.load(a, b) passes a JSON list
      try {
        for (String p : new com.fasterxml.jackson.databind.ObjectMapper().readValue(many, String[].class)) {
          out.add(p);
        }
      } catch (java.io.IOException e) {
        throw new IpcException("arrowipc: option paths is not a JSON list of strings: " + many);
      }
    }
    return out;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    String ddl = options.get("schema");
    if (ddl != null && !ddl.isEmpty()) return StructType.fromDDL(ddl);
    inferred = true;
    if (PartitionedFiles.forFileFormat(options)) {
      // DataFrameReader.load goes on to the file format's read (getTable routes it there), which
      // infers the schema with the partitions'; a catalog (CREATE TABLE) keeps what this returns
      if (calledBy(".DataFrameReader")) return new StructType();
      return discovered(options).schema();
    }
    List<Inputs.Listed> files = Inputs.list(paths(options));
    if (files.isEmpty()) {
      // Spark also asks for the schema of a path it is about to write to (DataFrameWriter.save
      // looks the table up first): there, no files is normal and the write brings its schema.
      if (calledByWriter()) return new StructType();
      if (calledBy(".DataStreamReader")) {
        throw new IpcException("arrowipc: " + Inputs.describe(paths(options)) + " holds no files yet "
            + "to infer the stream's schema from; give one: spark.readStream.schema(...)");
      }
      throw Inputs.noFiles(paths(options));
    }
    return Planning.commonSchema(files);
  }

  private static boolean calledBy(String classSuffix) {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(classSuffix)));
  }

  private static boolean calledByWriter() {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(".DataFrameWriter") || f.getClassName().endsWith(".DataFrameWriterV2")));
  }

  /** Spark's own discovery of a partitioned layout (schema, partition columns), done once. */
  private org.apache.spark.sql.execution.datasources.HadoopFsRelation discovered(Map<String, String> options) {
    if (discovery == null) discovery = PartitionedFiles.discover(options);
    return discovery;
  }

  private org.apache.spark.sql.execution.datasources.HadoopFsRelation discovery;

  @Override
  public Transform[] inferPartitioning(CaseInsensitiveStringMap options) {
    if (!PartitionedFiles.forFileFormat(options) || calledBy(".DataFrameReader")) return new Transform[0];
    StructField[] columns = discovered(options).partitionSchema().fields();
    Transform[] out = new Transform[columns.length];
    for (int i = 0; i < columns.length; i++) {
      out[i] = org.apache.spark.sql.connector.expressions.Expressions.identity(columns[i].name());
    }
    return out;
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    boolean fileFormat = partitioning.length > 0 || PartitionedFiles.forFileFormat(properties);
    return new ArrowIpcTable(schema, properties, inferred, fileFormat);
  }

  // ---- FileFormat: Spark's file source machinery over PartitionedFiles ----

  @Override
  public scala.Option<StructType> inferSchema(SparkSession session,
      scala.collection.immutable.Map<String, String> options,
      scala.collection.immutable.Seq<FileStatus> files) {
    // option schema (DDL) as DataFrameReader.schema(...): Spark's fallback from a V2 table to the
    // file format passes only the latter on as the user's schema
    StructType given = PartitionedFiles.schemaOption(options);
    if (given != null) return scala.Option.apply(given);
    return PartitionedFiles.inferSchema(files);
  }

  @Override
  public OutputWriterFactory prepareWrite(SparkSession session, Job job,
      scala.collection.immutable.Map<String, String> options, StructType dataSchema) {
    return new PartitionedFiles.WriterFactory(scala.jdk.javaapi.CollectionConverters.asJava(options));
  }

  @Override
  public boolean supportBatch(SparkSession session, StructType schema) {
    return true;                    // every read returns columnar batches
  }

  @Override
  public scala.Function1<PartitionedFile, scala.collection.Iterator<InternalRow>>
      buildReaderWithPartitionValues(SparkSession session, StructType dataSchema,
          StructType partitionSchema, StructType requiredSchema,
          scala.collection.immutable.Seq<Filter> filters,
          scala.collection.immutable.Map<String, String> options,
          org.apache.hadoop.conf.Configuration hadoopConf) {
    Filter[] pushed = scala.jdk.javaapi.CollectionConverters.asJava(filters).toArray(new Filter[0]);
    PartitionedFiles.checkPartitionTypes(PartitionedFiles.schemaOption(options), partitionSchema);
    return new PartitionedFiles.Reader(requiredSchema, partitionSchema, pushed, hadoopConf);
  }

  @Override
  public String toString() {
    return SHORT_NAME;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ArrowIpcDataSource;     // stateless as a file format
  }

  @Override
  public int hashCode() {
    return ArrowIpcDataSource.class.hashCode();
  }
}
