package io.arrowipc.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.SerializableConfiguration;

/**
 * The Hadoop configuration Hadoop file systems are opened with: on the driver, the active
 * session's (spark.hadoop.* settings, credentials of s3a and the like); tasks get the driver's
 * copy (Shipped, through their reader factory or file reader), since executors have no session.
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

  /**
   * A Hadoop configuration shipped to tasks as a broadcast, as Spark's Parquet and ORC readers
   * ship theirs: each executor deserializes it once, where a configuration held by the reader
   * (its thousand-odd entries) would be deserialized again with every task's closure. Without a
   * session to broadcast through, it travels with the reader.
   */
  static final class Shipped implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final org.apache.spark.broadcast.Broadcast<SerializableConfiguration> broadcast;
    private final SerializableConfiguration direct;

    Shipped(Configuration conf) {
      org.apache.spark.broadcast.Broadcast<SerializableConfiguration> b = null;
      scala.Option<SparkSession> s = SparkSession.getActiveSession();
      if (s.isEmpty()) s = SparkSession.getDefaultSession();
      if (s.isDefined()) {
        b = s.get().sparkContext().broadcast(new SerializableConfiguration(conf),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class));
      }
      this.broadcast = b;
      this.direct = b == null ? new SerializableConfiguration(conf) : null;
    }

    Configuration value() {
      return broadcast != null ? broadcast.value().value() : direct.value();
    }
  }
}
