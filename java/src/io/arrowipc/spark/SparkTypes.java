package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimeType;

/**
 * Arrow types -> the Spark SQL types they read as: the mapping of the Python source
 * (arrowipc/spark/spark_types.py), so both paths give the same DataFrame schema.
 *
 * <p>Every column reads as nullable. Unsigned integers widen to the next signed type that holds
 * every value (uint64 to decimal(20,0)); dictionary, run-end and extension types read as their
 * values; every string, binary and list layout reads as Spark's one string, binary and array type.
 */
final class SparkTypes {
  static final int SPARK_MAX_DECIMAL_PRECISION = 38;

  private SparkTypes() {}

  static StructType schemaOf(Schema schema, String path) {
    List<StructField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(new StructField(f.getName(),
          typeOf(f, "field '" + f.getName() + "' of " + path, true), true,
          org.apache.spark.sql.types.Metadata.empty()));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  private static IpcException fail(Field f, String where, String why) {
    return new IpcException("arrowipc: " + where + " has Arrow type " + arrowName(f.getType())
        + ", which Spark cannot hold: " + why);
  }

  /** The name arrowipc (and pyarrow) give a type, for messages. */
  static String arrowName(ArrowType t) {
    switch (t.getTypeID()) {
      case Interval:
        switch (((ArrowType.Interval) t).getUnit()) {
          case YEAR_MONTH: return "month_interval";
          case DAY_TIME: return "day_time_interval";
          default: return "month_day_nano_interval";
        }
      case Union: return "union";
      default: return t.toString();
    }
  }

  static DataType typeOf(Field f, String where, boolean topLevel) {
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Null: return DataTypes.NullType;
      case Bool: return DataTypes.BooleanType;
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        int w = i.getBitWidth();
        if (i.getIsSigned()) {
          return w == 8 ? DataTypes.ByteType : w == 16 ? DataTypes.ShortType
              : w == 32 ? DataTypes.IntegerType : DataTypes.LongType;
        }
        return w == 8 ? DataTypes.ShortType : w == 16 ? DataTypes.IntegerType
            : w == 32 ? DataTypes.LongType : DataTypes.createDecimalType(20, 0);
      }
      case FloatingPoint:
        switch (((ArrowType.FloatingPoint) t).getPrecision()) {
          case DOUBLE: return DataTypes.DoubleType;
          default: return DataTypes.FloatType;
        }
      case Date: return DataTypes.DateType;
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        if (d.getPrecision() > SPARK_MAX_DECIMAL_PRECISION) {
          throw fail(f, where, "Spark decimals hold at most " + SPARK_MAX_DECIMAL_PRECISION + " digits");
        }
        if (d.getPrecision() < 1 || d.getScale() < 0 || d.getScale() > d.getPrecision()) {
          throw fail(f, where, "Spark decimals need 1 <= precision and 0 <= scale <= precision, "
              + "found precision " + d.getPrecision() + " and scale " + d.getScale());
        }
        return DataTypes.createDecimalType(d.getPrecision(), d.getScale());
      }
      case Utf8: case LargeUtf8: case Utf8View: return DataTypes.StringType;
      case Binary: case LargeBinary: case BinaryView: case FixedSizeBinary:
        return DataTypes.BinaryType;
      case Timestamp:
        return ((ArrowType.Timestamp) t).getTimezone() != null ? DataTypes.TimestampType
            : DataTypes.TimestampNTZType;
      case Time: return TimeType.apply();
      case Duration: return DayTimeIntervalType.apply();
      case Interval:
        if (((ArrowType.Interval) t).getUnit()
            == org.apache.arrow.vector.types.IntervalUnit.DAY_TIME) {
          if (!topLevel) throw fail(f, where, "day-time intervals are read only as top-level columns");
          return DayTimeIntervalType.apply();
        }
        if (((ArrowType.Interval) t).getUnit()
            == org.apache.arrow.vector.types.IntervalUnit.YEAR_MONTH) {
          throw fail(f, where, "Spark's Python data sources cannot return year-month intervals");
        }
        throw fail(f, where, "Spark has no month-day-nanosecond interval type for data sources");
      case Map: {
        if (f.getChildren().size() != 1 || f.getChildren().get(0).getChildren().size() != 2) {
          throw fail(f, where, "a map needs one entries field with a key and a value field");
        }
        Field entries = f.getChildren().get(0);
        DataType k = typeOf(entries.getChildren().get(0), where + " (map key)", false);
        DataType v = typeOf(entries.getChildren().get(1), where + " (map value)", false);
        return DataTypes.createMapType(k, v, true);
      }
      case Struct: {
        List<StructField> out = new ArrayList<>();
        for (Field c : f.getChildren()) {
          out.add(new StructField(c.getName(), typeOf(c, where + "." + c.getName(), false), true,
              org.apache.spark.sql.types.Metadata.empty()));
        }
        return new StructType(out.toArray(new StructField[0]));
      }
      case List: case LargeList: case ListView: case LargeListView: case FixedSizeList:
        if (f.getChildren().size() != 1) {
          throw fail(f, where, "a list needs one child field, found " + f.getChildren().size());
        }
        return DataTypes.createArrayType(typeOf(f.getChildren().get(0), where + "[]", false), true);
      case RunEndEncoded:
        if (f.getChildren().size() != 2) {
          throw fail(f, where, "a run-end encoded field needs two child fields (run ends, values), "
              + "found " + f.getChildren().size());
        }
        return typeOf(f.getChildren().get(1), where, topLevel);
      case Union: throw fail(f, where, "Spark has no union type");
      default: throw fail(f, where, "no Spark type matches it");
    }
  }
}
