package io.arrowipc.spark;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Where a write goes: the file operations the commit protocol (ArrowIpcWriteBuilder) needs, on
 * a local directory (java.nio: atomic replacing renames, fsync for option durable) or on a Hadoop
 * FileSystem (hdfs:, s3a: ... — tasks write under _temporary there too, and job commit renames).
 * Paths are strings, as the commit messages carry them from the executors to the driver.
 */
abstract class Outputs implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The output directory: an absolute local path, or a qualified URI. */
  final String root;

  Outputs(String root) {
    this.root = root;
  }

  /**
   * The outputs of a save path: plain paths are local; URIs (file:, hdfs:, s3a: ...) go through
   * their Hadoop FileSystem, except a file: URI with option durable (fsync needs java.nio).
   */
  static Outputs of(String path, boolean durable) {
    String scheme = Source.scheme(path);
    if (scheme == null || (durable && scheme.equals("file"))) {
      return new Local(new File(Inputs.localPath(path)).getAbsolutePath());
    }
    if (Source.isHttp(scheme)) {
      throw new IpcException("arrowipc: cannot write to " + path + ": HTTP has no writes; save to "
          + "a local path or a Hadoop FileSystem URI (hdfs://, s3a:// ...)");
    }
    if (durable) {
      throw new IpcException("arrowipc: option durable is for local paths only (a Hadoop "
          + "FileSystem decides itself when written data is durable); got " + path);
    }
    Configuration conf = HadoopConf.get();
    FileSystem fs = Source.hadoopFileSystem(path, conf);
    return new Hadoop(fs.makeQualified(new Path(path)).toString(), conf);
  }

  abstract String child(String dir, String name);

  abstract boolean isDirectory(String path);

  abstract boolean exists(String path);

  /** Create a directory and its parents; false when it is not there afterwards. */
  abstract boolean mkdirs(String path);

  /**
   * Create one directory inside an existing one; false when the parent is missing. Tasks use
   * this, so that a task still finishing after its job was aborted cannot bring the job's
   * directory back.
   */
  abstract boolean mkdir(String path);

  /** The names in a directory (empty when it is not one). */
  abstract List<String> list(String dir);

  /** The names of the directories in a directory. */
  abstract List<String> listDirectories(String dir);

  /** A new file (replacing one there) in an existing directory: parents are never created. */
  abstract OutputStream create(String path) throws IOException;

  /** A channel over a stream from create(): Arrow's writers write through channels. */
  abstract WritableByteChannel channel(OutputStream out);

  abstract byte[] readAll(String path) throws IOException;

  /** Rename `from` to `to`, replacing `to` (atomically where the file system can). */
  abstract void move(String from, String to) throws IOException;

  /** Remove a file or a directory tree (symbolic links themselves, not their targets), quietly. */
  abstract void remove(String path);

  /** Remove a directory only when it is empty. */
  abstract void removeIfEmpty(String dir);

  /** Option durable: a file's written bytes reach the device before this returns. */
  abstract void sync(OutputStream out) throws IOException;

  /** Option durable: a directory's entries (renames) reach the device. */
  abstract void syncDirectory(String dir) throws IOException;

  static final class Local extends Outputs {
    private static final long serialVersionUID = 1L;

    Local(String root) {
      super(root);
    }

    @Override
    String child(String dir, String name) {
      return new File(dir, name).getPath();
    }

    @Override
    boolean isDirectory(String path) {
      return new File(path).isDirectory();
    }

    @Override
    boolean exists(String path) {
      return new File(path).exists();
    }

    @Override
    boolean mkdirs(String path) {
      File f = new File(path);
      return f.mkdirs() || f.isDirectory();
    }

    @Override
    boolean mkdir(String path) {
      File f = new File(path);
      return f.mkdir() || f.isDirectory();     // mkdir() fails when the parent is missing
    }

    @Override
    List<String> list(String dir) {
      String[] names = new File(dir).list();
      List<String> out = new ArrayList<>();
      if (names != null) for (String n : names) out.add(n);
      return out;
    }

    @Override
    List<String> listDirectories(String dir) {
      File[] dirs = new File(dir).listFiles(File::isDirectory);
      List<String> out = new ArrayList<>();
      if (dirs != null) for (File d : dirs) out.add(d.getName());
      return out;
    }

    @Override
    OutputStream create(String path) throws IOException {
      return new FileOutputStream(path);
    }

    @Override
    WritableByteChannel channel(OutputStream out) {
      return ((FileOutputStream) out).getChannel();      // direct buffers written without copies
    }

    @Override
    byte[] readAll(String path) throws IOException {
      return Files.readAllBytes(new File(path).toPath());
    }

    @Override
    void move(String from, String to) throws IOException {
      Files.move(new File(from).toPath(), new File(to).toPath(), StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    void remove(String path) {
      File f = new File(path);
      File[] children = f.isDirectory() && !Files.isSymbolicLink(f.toPath()) ? f.listFiles() : null;
      if (children != null) for (File c : children) remove(c.getPath());
      f.delete();
    }

    @Override
    void removeIfEmpty(String dir) {
      new File(dir).delete();                  // refused unless empty
    }

    @Override
    void sync(OutputStream out) throws IOException {
      ((FileOutputStream) out).getChannel().force(true);
    }

    @Override
    void syncDirectory(String dir) throws IOException {
      try (FileChannel ch = FileChannel.open(new File(dir).toPath(), java.nio.file.StandardOpenOption.READ)) {
        ch.force(true);
      }
    }
  }

  static final class Hadoop extends Outputs {
    private static final long serialVersionUID = 1L;
    private final SerializableConfiguration conf;
    private transient FileSystem fs;

    Hadoop(String root, Configuration conf) {
      super(root);
      this.conf = new SerializableConfiguration(conf);
    }

    private FileSystem fs() {
      if (fs == null) {
        fs = Source.hadoopFileSystem(root, conf.value());
        // file: is a checksummed file system: its .crc sidecars are of no use to IPC files
        if (fs instanceof ChecksumFileSystem) fs = ((ChecksumFileSystem) fs).getRawFileSystem();
      }
      return fs;
    }

    private IpcException failed(String what, String path, IOException e) {
      return new IpcException("arrowipc: cannot " + what + " " + path + ": " + e, e);
    }

    @Override
    String child(String dir, String name) {
      return new Path(new Path(dir), name).toString();
    }

    @Override
    boolean isDirectory(String path) {
      try {
        return fs().getFileStatus(new Path(path)).isDirectory();
      } catch (java.io.FileNotFoundException e) {
        return false;
      } catch (IOException e) {
        throw failed("look at", path, e);
      }
    }

    @Override
    boolean exists(String path) {
      try {
        return fs().exists(new Path(path));
      } catch (IOException e) {
        throw failed("look at", path, e);
      }
    }

    @Override
    boolean mkdirs(String path) {
      try {
        return fs().mkdirs(new Path(path)) || isDirectory(path);
      } catch (IOException e) {
        throw failed("create the directory", path, e);
      }
    }

    @Override
    boolean mkdir(String path) {
      // A FileSystem has no single-level mkdir: look at the parent first. The window left
      // between the look and mkdirs is closed by the caller (TaskWriter checks the job's
      // driver file afterwards), and create() never makes parents.
      if (!isDirectory(new Path(path).getParent().toString())) return false;
      return mkdirs(path);
    }

    private List<String> names(String dir, boolean directoriesOnly) {
      List<String> out = new ArrayList<>();
      try {
        for (FileStatus st : fs().listStatus(new Path(dir))) {
          if (!directoriesOnly || st.isDirectory()) out.add(st.getPath().getName());
        }
      } catch (java.io.FileNotFoundException e) {
        return out;
      } catch (IOException e) {
        throw failed("list", dir, e);
      }
      return out;
    }

    @Override
    List<String> list(String dir) {
      return names(dir, false);
    }

    @Override
    List<String> listDirectories(String dir) {
      return names(dir, true);
    }

    @Override
    OutputStream create(String path) throws IOException {
      Path p = new Path(path);
      try {
        return fs().createFile(p).overwrite(true).build();   // the builder's default: non-recursive
      } catch (IOException e) {
        // FileSystems without createNonRecursive say so; create after checking the parent instead
        String m = e.getMessage();
        if (m == null || !m.startsWith("createNonRecursive unsupported")) throw e;
        if (!isDirectory(p.getParent().toString())) {
          throw new java.io.FileNotFoundException("the directory of " + path + " does not exist");
        }
        return fs().create(p, true);
      }
    }

    @Override
    WritableByteChannel channel(OutputStream out) {
      return Channels.newChannel(out);
    }

    @Override
    byte[] readAll(String path) throws IOException {
      try (java.io.InputStream in = fs().open(new Path(path))) {
        return in.readAllBytes();
      }
    }

    @Override
    void move(String from, String to) throws IOException {
      Path src = new Path(from), dst = new Path(to);
      if (fs().rename(src, dst)) return;
      // Hadoop's rename does not replace an existing file: drop it, then rename again
      if (fs().exists(dst) && fs().delete(dst, false) && fs().rename(src, dst)) return;
      throw new IOException("renaming " + from + " to " + to + " failed");
    }

    @Override
    void remove(String path) {
      try {
        fs().delete(new Path(path), true);
      } catch (IOException ignored) {
        // best effort, as for local files
      }
    }

    @Override
    void removeIfEmpty(String dir) {
      try {
        FileStatus[] left = fs().listStatus(new Path(dir));
        if (left.length == 0) fs().delete(new Path(dir), false);
      } catch (IOException ignored) {
        // gone already, or not ours to remove
      }
    }

    @Override
    void sync(OutputStream out) throws IOException {
      ((FSDataOutputStream) out).hsync();
    }

    @Override
    void syncDirectory(String dir) {
      // a Hadoop FileSystem's renames are durable when they return (HDFS's NameNode logs them)
    }
  }
}
