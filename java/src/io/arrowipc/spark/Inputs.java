package io.arrowipc.spark;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.PathMatcher;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Input discovery, as the Python source does it: a load path is a file, a directory (its .arrow,
 * .arrows, .feather and .ipc files, not those named _* or .*) or a glob. Local paths are listed
 * with java.nio; URIs with a scheme (file:, hdfs:, s3a: ...) with their Hadoop FileSystem; an
 * http(s) URL names one file (HTTP has no listing).
 */
final class Inputs {
  static final String[] SUFFIXES = {".arrow", ".arrows", ".feather", ".ipc"};

  private Inputs() {}

  /** A local path for a plain path or a file: URI; an IpcException for other schemes. */
  static String localPath(String path) {
    if (path.startsWith("file://")) return path.substring("file://".length());
    if (path.startsWith("file:")) return path.substring("file:".length());
    if (path.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
      throw new IpcException("arrowipc: only local (or shared, mounted) paths are supported, got '"
          + path + "'");
    }
    return path;
  }

  static boolean isDataName(String name) {
    if (name.startsWith("_") || name.startsWith(".")) return false;
    for (String s : SUFFIXES) if (name.endsWith(s)) return true;
    return false;
  }

  /**
   * A listed input, its modification time (ms since the epoch; 0 when unknown: http) and, from a
   * Hadoop listing, its size and ETag (-1 and null when unknown): what FooterCache keys on.
   */
  static final class Listed {
    final String path;
    final long modified;
    final long length;
    final String etag;

    Listed(String path, long modified) {
      this(path, modified, -1, null);
    }

    Listed(String path, long modified, long length, String etag) {
      this.path = path;
      this.modified = modified;
      this.length = length;
      this.etag = etag;
    }

    /** A Hadoop FileStatus's path, time, size and ETag (object stores' connectors give one). */
    static Listed of(FileStatus st) {
      String etag = st instanceof EtagSource ? ((EtagSource) st).getEtag() : null;
      return new Listed(st.getPath().toString(), st.getModificationTime(), st.getLen(),
          etag == null || etag.isEmpty() ? null : etag);
    }
  }

  private static final Comparator<Listed> BY_PATH = Comparator.comparing(l -> l.path);

  private static Listed local(File f) {
    return new Listed(f.getAbsolutePath(), f.lastModified());
  }

  private static List<Listed> filesIn(File dir) {
    List<Listed> out = new ArrayList<>();
    File[] list = dir.listFiles();
    if (list == null) return out;
    for (File f : list) {
      if (f.isFile() && isDataName(f.getName())) out.add(local(f));
    }
    out.sort(BY_PATH);
    return out;
  }

  /** The data files `paths` name, sorted per path, as absolute paths or URIs (empty when none). */
  static List<String> find(List<String> paths) {
    List<String> out = new ArrayList<>();
    for (Listed l : list(paths)) out.add(l.path);
    return out;
  }

  /**
   * find() with each file's modification time, taken from the listing (a Hadoop FileStatus or
   * the local file), so that streams can order what arrived whatever the file system.
   */
  static List<Listed> list(List<String> paths) {
    List<Listed> found = new ArrayList<>();
    Configuration conf = null;
    for (String raw : paths) {
      String scheme = Source.scheme(raw);
      if (Source.isHttp(scheme)) {
        found.add(new Listed(raw, 0));
        continue;
      }
      if (scheme != null) {
        if (conf == null) conf = HadoopConf.get();
        found.addAll(findHadoop(raw, conf));
        continue;
      }
      File f = new File(raw);
      if (f.isDirectory()) {
        found.addAll(filesIn(f));
      } else if (f.isFile()) {
        found.add(local(f));
      } else if (isGlob(raw)) {
        for (String m : glob(raw)) {
          File g = new File(m);
          if (g.isDirectory()) found.addAll(filesIn(g)); else if (g.isFile()) found.add(local(g));
        }
      }
    }
    return found;
  }

  private static boolean isGlob(String path) {
    return path.matches(".*[*?\\[{].*");
  }

  /** A file, directory or glob on a Hadoop FileSystem, as qualified URIs. */
  private static List<Listed> findHadoop(String location, Configuration conf) {
    FileSystem fs = Source.hadoopFileSystem(location, conf);
    List<Listed> out = new ArrayList<>();
    try {
      Path p = new Path(location);
      FileStatus[] matched;
      if (isGlob(location)) {
        matched = fs.globStatus(p);
        if (matched == null) return out;
        Arrays.sort(matched);
      } else if (fs.exists(p)) {
        matched = new FileStatus[] {fs.getFileStatus(p)};
      } else {
        return out;
      }
      for (FileStatus st : matched) {
        if (!st.isDirectory()) {
          out.add(Listed.of(st));
          continue;
        }
        List<Listed> inDir = new ArrayList<>();
        for (FileStatus c : fs.listStatus(st.getPath())) {
          if (c.isFile() && isDataName(c.getPath().getName())) {
            inDir.add(Listed.of(c));
          }
        }
        inDir.sort(BY_PATH);
        out.addAll(inDir);
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new IpcException("arrowipc: cannot list " + location + ": " + e, e);
    }
    return out;
  }

  private static List<String> glob(String pattern) {
    java.nio.file.Path p = Paths.get(pattern).toAbsolutePath();
    java.nio.file.Path base = p.getRoot();
    int depth = 0;
    for (java.nio.file.Path part : p) {
      if (part.toString().matches(".*[*?\\[{].*")) break;
      base = base.resolve(part);
      depth++;
    }
    int levels = p.getNameCount() - depth;
    PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + p);
    List<String> out = new ArrayList<>();
    try (Stream<java.nio.file.Path> s = Files.walk(base, levels)) {
      s.filter(m::matches).forEach(x -> out.add(x.toString()));
    } catch (IOException e) {
      return out;
    }
    out.sort(null);
    return out;
  }

  static String describe(List<String> paths) {
    return paths.size() == 1 ? "'" + paths.get(0) + "'" : paths.toString();
  }

  static IpcException noFiles(List<String> paths) {
    if (paths.isEmpty() || paths.get(0).isEmpty()) {
      return new IpcException("arrowipc: no path given; use .load(path) or .option('path', ...)");
    }
    return new IpcException("arrowipc: " + describe(paths) + " names no " + String.join("/",
        Arrays.asList(SUFFIXES)) + " files");
  }
}
