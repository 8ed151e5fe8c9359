package io.arrowipc.spark;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * Input discovery, as the Python source does it: a load path is a file, a directory (its .arrow,
 * .arrows, .feather and .ipc files, not those named _* or .*) or a glob; local paths and file: URIs.
 */
final class Inputs {
  static final String[] SUFFIXES = {".arrow", ".arrows", ".feather", ".ipc"};

  private Inputs() {}

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

  private static List<String> filesIn(File dir) {
    List<String> out = new ArrayList<>();
    File[] list = dir.listFiles();
    if (list == null) return out;
    for (File f : list) {
      if (f.isFile() && isDataName(f.getName())) out.add(f.getAbsolutePath());
    }
    out.sort(null);
    return out;
  }

  /** The data files `paths` name, sorted per path, as absolute paths (empty when none). */
  static List<String> find(List<String> paths) {
    List<String> found = new ArrayList<>();
    for (String raw : paths) {
      String path = localPath(raw);
      File f = new File(path);
      if (f.isDirectory()) {
        found.addAll(filesIn(f));
      } else if (f.isFile()) {
        found.add(f.getAbsolutePath());
      } else if (path.matches(".*[*?\\[{].*")) {
        for (String m : glob(path)) {
          File g = new File(m);
          if (g.isDirectory()) found.addAll(filesIn(g)); else if (g.isFile()) found.add(g.getAbsolutePath());
        }
      }
    }
    return found;
  }

  private static List<String> glob(String pattern) {
    Path p = Paths.get(pattern).toAbsolutePath();
    Path base = p.getRoot();
    int depth = 0;
    for (Path part : p) {
      if (part.toString().matches(".*[*?\\[{].*")) break;
      base = base.resolve(part);
      depth++;
    }
    int levels = p.getNameCount() - depth;
    PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + p);
    List<String> out = new ArrayList<>();
    try (Stream<Path> s = Files.walk(base, levels)) {
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
