package io.arrowipc.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;

/**
 * The Hadoop configuration Hadoop file systems are opened with: on the driver, the active
 * session's (spark.hadoop.* settings, credentials of s3a and the like); tasks get the driver's
 * copy through their reader factory (IpcReaderFactory), since executors have no session.
 */
final class HadoopConf {
  private HadoopConf() {}

  static Configuration get() {
    try {
      scala.Option<SparkSession> s = SparkSession.getActiveSession();
      if (s.isEmpty()) s = SparkSession.getDefaultSession();
      if (s.isDefined()) return new Configuration(s.get().sparkContext().hadoopConfiguration());
    } catch (RuntimeException | LinkageError e) {
      // no session here (an executor, a unit test): Hadoop's defaults
    }
    return new Configuration();
  }
}
