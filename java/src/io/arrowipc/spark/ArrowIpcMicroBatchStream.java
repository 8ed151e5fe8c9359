package io.arrowipc.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadAllAvailable;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxFiles;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * spark.readStream.format("arrowipc") over a directory (or glob) that files arrive in.
 *
 * <p>Each trigger lists the inputs and admits the complete files it has not admitted before
 * (StreamFiles.isComplete: a file format input ends with its magic, a stream with its
 * end-of-stream marker), at most maxFilesPerTrigger of them, oldest modification time first
 * (newest first with latestFirst=true). The admitted files are numbered in admission order and
 * the offset is how many have been admitted; which file has which number is written to the
 * checkpoint (metadataPath/files/N lists the files that took the offset to N) before the offset
 * is handed to Spark. So a restarted query replays an uncommitted batch with exactly the same
 * files, and a file is read once whatever its modification time (a file renamed into the
 * directory keeps an old one).
 */
final class ArrowIpcMicroBatchStream implements MicroBatchStream, SupportsAdmissionControl,
    SupportsTriggerAvailableNow {
  private static final String LOG_HEADER = "arrowipc-stream-files v1";

  private final StructType schema;
  private final Map<String, String> options;
  private final boolean inferred;
  private final Outputs logFs;
  private final String log;                                      // the file log's directory
  private final List<String> admitted = new ArrayList<>();     // file number -> path
  private final Set<String> known = new HashSet<>();
  private final int maxFiles;                                    // -1: no limit
  private final boolean latestFirst;
  private Set<String> availableNowTarget;                        // Trigger.AvailableNow: the files present at its start

  ArrowIpcMicroBatchStream(StructType schema, Map<String, String> options, boolean inferred,
      String metadataPath) {
    this.schema = schema;
    this.options = options;
    this.inferred = inferred;
    String max = Options.get(options, "maxFilesPerTrigger");
    this.maxFiles = max == null ? -1 : Options.count(max, "maxFilesPerTrigger");
    String latest = Options.get(options, "latestFirst");
    if (latest != null && !latest.equalsIgnoreCase("true") && !latest.equalsIgnoreCase("false")) {
      throw new IpcException("arrowipc: option latestFirst must be true or false; got '" + latest + "'");
    }
    this.latestFirst = latest != null && latest.equalsIgnoreCase("true");
    // the checkpoint's own file system: a local path, or a URI (file:, hdfs:, s3a: ...) Hadoop opens
    this.logFs = Outputs.of(metadataPath, false);
    this.log = logFs.child(logFs.root, "files");
    loadLog();
  }

  /** The file numbering already written to the checkpoint (empty for a new query). */
  private void loadLog() {
    TreeMap<Long, String> byOffset = new TreeMap<>();
    for (String name : logFs.list(log)) {
      if (name.matches("\\d+")) byOffset.put(Long.parseLong(name), logFs.child(log, name));
    }
    for (Map.Entry<Long, String> e : byOffset.entrySet()) {
      List<String> lines;
      try {
        String text = new String(logFs.readAll(e.getValue()), StandardCharsets.UTF_8);
        lines = text.isEmpty() ? List.of() : Arrays.asList(text.split("\n", -1));
        if (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
          lines = lines.subList(0, lines.size() - 1);      // the last line's newline
        }
      } catch (IOException x) {
        throw new IpcException("arrowipc: cannot read the stream's file log " + e.getValue() + ": "
            + x.getMessage(), x);
      }
      if (lines.isEmpty() || !lines.get(0).equals(LOG_HEADER)
          || e.getKey() != admitted.size() + lines.size() - 1) {
        throw new IpcException("arrowipc: the stream's file log " + e.getValue() + " is damaged: "
            + "expected '" + LOG_HEADER + "' and the files numbered " + admitted.size() + " to "
            + (e.getKey() - 1) + ", found " + (lines.size() - 1) + " lines after "
            + (lines.isEmpty() ? "nothing" : "'" + lines.get(0) + "'"));
      }
      for (String path : lines.subList(1, lines.size())) {
        admitted.add(path);
        known.add(path);
      }
    }
  }

  /**
   * Number and record `fresh`: written to the checkpoint first, to a temporary file renamed into
   * place (atomic on local disks and HDFS; an object store's rename is a copy, but a reader never
   * takes the temporary name for an entry).
   */
  private void admit(List<String> fresh) {
    long end = admitted.size() + fresh.size();
    StringBuilder text = new StringBuilder(LOG_HEADER).append('\n');
    for (String p : fresh) {
      if (p.indexOf('\n') >= 0 || p.indexOf('\r') >= 0) {
        throw new IpcException("arrowipc: cannot stream the file " + p + ": its name holds a line break");
      }
      text.append(p).append('\n');
    }
    String tmp = logFs.child(log, "." + end + ".tmp");
    try {
      if (!logFs.mkdirs(log)) throw new IOException("cannot create the directory");
      try (OutputStream out = logFs.create(tmp)) {
        out.write(text.toString().getBytes(StandardCharsets.UTF_8));
      }
      logFs.move(tmp, logFs.child(log, Long.toString(end)));
    } catch (IOException e) {
      logFs.remove(tmp);
      throw new IpcException("arrowipc: cannot write the stream's file log under " + log + ": "
          + e.getMessage(), e);
    }
    admitted.addAll(fresh);
    known.addAll(fresh);
  }

  /** Complete files not admitted yet, in admission order. */
  private List<String> candidates() {
    List<Inputs.Listed> found = new ArrayList<>();
    for (Inputs.Listed l : Inputs.list(ArrowIpcDataSource.paths(options))) {
      if (known.contains(l.path)) continue;
      if (availableNowTarget != null && !availableNowTarget.contains(l.path)) continue;
      if (StreamFiles.isComplete(l.path)) found.add(l);
    }
    // the modification times the listing gave (local files and any Hadoop FileSystem alike)
    Comparator<Inputs.Listed> order = Comparator.comparingLong(l -> l.modified);
    if (latestFirst) order = order.reversed();
    found.sort(order.thenComparing(l -> l.path));
    List<String> out = new ArrayList<>();
    for (Inputs.Listed l : found) out.add(l.path);
    return out;
  }

  @Override
  public Offset initialOffset() {
    return new FileCountOffset(0);
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException("arrowipc streams take latestOffset(start, limit)");
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    return maxFiles > 0 ? ReadLimit.maxFiles(maxFiles) : ReadLimit.allAvailable();
  }

  @Override
  public synchronized Offset latestOffset(Offset startOffset, ReadLimit limit) {
    long start = ((FileCountOffset) startOffset).files;
    long cap = limit instanceof ReadMaxFiles ? ((ReadMaxFiles) limit).maxFiles() : Long.MAX_VALUE;
    if (!(limit instanceof ReadMaxFiles) && !(limit instanceof ReadAllAvailable)) {
      cap = maxFiles > 0 ? maxFiles : Long.MAX_VALUE;   // other limits (rows, bytes) do not apply to files
    }
    // Files admitted before a restart but not yet in a batch come first, in their order.
    long pending = admitted.size() - start;
    if (pending < cap) {
      List<String> fresh = candidates();
      long room = cap - pending;
      if (fresh.size() > room) fresh = fresh.subList(0, (int) room);
      if (!fresh.isEmpty()) admit(new ArrayList<>(fresh));
    }
    return new FileCountOffset(admitted.size() - start <= cap ? admitted.size() : start + cap);
  }

  @Override
  public void prepareForTriggerAvailableNow() {
    availableNowTarget = new HashSet<>(Inputs.find(ArrowIpcDataSource.paths(options)));
  }

  @Override
  public Offset deserializeOffset(String json) {
    return FileCountOffset.parse(json);
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    long from = ((FileCountOffset) start).files;
    long to = ((FileCountOffset) end).files;
    if (to > admitted.size() || from > to) {
      throw new IpcException("arrowipc: the stream's checkpoint asks for files " + from + " to " + to
          + " but its file log under " + log + " numbers " + admitted.size() + " files");
    }
    List<InputPartition> parts = new ArrayList<>();
    for (String path : admitted.subList((int) from, (int) to)) {
      try (IpcFile f = FooterCache.open(path)) {      // read when it was admitted (StreamFiles)
        if (inferred) {
          StructType got = SparkTypes.schemaOf(f.schema, path);
          if (!got.equals(schema)) {
            throw new IpcException("arrowipc: the schema of " + path + ", which arrived in the "
                + "stream, differs from the stream's: " + Planning.describeDifference(got, schema)
                + ". Give the stream a schema (readStream.schema(...)) to read files that differ");
          }
        }
        int[] columns = Planning.matchColumns(f, schema);
        if (!f.fileFormat) {
          parts.add(new IpcPartition(path, false, 0, -1, columns));
        } else if (f.batchBlocks.length > 0) {
          parts.add(new IpcPartition(path, true, 0, f.batchBlocks.length, columns));
        }
      }
    }
    return parts.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new IpcReaderFactory(schema, new Filter[0]);
  }

  @Override
  public void commit(Offset end) {
    // nothing to release: the file log stays, it is what a restart replays from
  }

  @Override
  public void stop() {
  }

  @Override
  public String toString() {
    return "arrowipc stream " + ArrowIpcDataSource.paths(options);
  }

  /** How many files the stream has admitted; serialized as {"files": N}. */
  static final class FileCountOffset extends Offset {
    final long files;

    FileCountOffset(long files) {
      this.files = files;
    }

    static FileCountOffset parse(String json) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\s*\\{\\s*\"files\"\\s*:\\s*(\\d+)\\s*}\\s*")
          .matcher(json);
      if (!m.matches()) {
        throw new IpcException("arrowipc: expected a stream offset {\"files\": N} in the checkpoint, "
            + "found " + json);
      }
      return new FileCountOffset(Long.parseLong(m.group(1)));
    }

    @Override
    public String json() {
      return "{\"files\":" + files + "}";
    }
  }
}
