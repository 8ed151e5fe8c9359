package io.arrowipc.spark;

import java.math.BigDecimal;
import java.math.BigInteger;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark column vectors read straight from Arrow buffers in direct memory (no copy, no Arrow Java
 * vectors), converting on access where Spark's representation differs: unsigned widths, half
 * floats, narrow and wide decimals, time units, dictionary and run-end encodings, every string,
 * binary and list layout. {@link BatchDecoder} validates offsets and indices before these are
 * built, so no getter can read outside its buffers.
 */
final class Vectors {
  private Vectors() {}

  /** A vector over `length` slots with an optional validity bitmap (address 0: all valid). */
  abstract static class Vec extends ColumnVector {
    final int length;
    final long validity;
    int nullCount;

    Vec(DataType type, int length, long validity, int nullCount) {
      super(type);
      this.length = length;
      this.validity = nullCount == 0 ? 0 : validity;
      this.nullCount = nullCount;
    }

    @Override public void close() {}
    @Override public boolean hasNull() { return numNulls() > 0; }
    @Override public int numNulls() { return nullCount; }

    @Override public boolean isNullAt(int i) {
      return validity != 0 && (Platform.getByte(null, validity + (i >> 3)) & (1 << (i & 7))) == 0;
    }

    private UnsupportedOperationException unsupported(String what) {
      return new UnsupportedOperationException(what + " of a " + getClass().getSimpleName());
    }

    @Override public boolean getBoolean(int i) { throw unsupported("getBoolean"); }
    @Override public byte getByte(int i) { return (byte) getLong(i); }
    @Override public short getShort(int i) { return (short) getLong(i); }
    @Override public int getInt(int i) { return (int) getLong(i); }
    @Override public long getLong(int i) { throw unsupported("getLong"); }
    @Override public float getFloat(int i) { throw unsupported("getFloat"); }
    @Override public double getDouble(int i) { throw unsupported("getDouble"); }
    @Override public Decimal getDecimal(int i, int p, int s) { throw unsupported("getDecimal"); }
    @Override public UTF8String getUTF8String(int i) { throw unsupported("getUTF8String"); }
    @Override public byte[] getBinary(int i) { throw unsupported("getBinary"); }
    @Override public ColumnarArray getArray(int i) { throw unsupported("getArray"); }
    @Override public ColumnarMap getMap(int i) { throw unsupported("getMap"); }
    @Override public ColumnVector getChild(int i) { throw unsupported("getChild"); }
  }

  /** Integers and booleans read where the schema asks for strings (their decimal text). */
  static final class TextVec extends Vec {
    final Vec values;
    final boolean bool;
    TextVec(DataType t, Vec values, boolean bool) {
      super(t, values.length, 0, values.nullCount);
      this.values = values;
      this.bool = bool;
    }
    @Override public boolean isNullAt(int i) { return values.isNullAt(i); }
    @Override public UTF8String getUTF8String(int i) {
      return UTF8String.fromString(bool ? String.valueOf(values.getBoolean(i)) : String.valueOf(values.getLong(i)));
    }
  }

  static final class NullVec extends Vec {
    NullVec(DataType t, int n) { super(t, n, 0, n); }
    @Override public boolean isNullAt(int i) { return true; }
  }

  static final class BoolVec extends Vec {
    final long values;
    BoolVec(DataType t, int n, long validity, int nulls, long values) {
      super(t, n, validity, nulls);
      this.values = values;
    }
    @Override public boolean getBoolean(int i) {
      return (Platform.getByte(null, values + (i >> 3)) & (1 << (i & 7))) != 0;
    }
  }

  /** Integers of any width and signedness, read as the Java value they hold. */
  static final class IntVec extends Vec {
    final long values;
    final int width;
    final boolean signed;
    IntVec(DataType t, int n, long validity, int nulls, long values, int width, boolean signed) {
      super(t, n, validity, nulls);
      this.values = values;
      this.width = width;
      this.signed = signed;
    }
    @Override public byte getByte(int i) { return Platform.getByte(null, values + i); }
    @Override public short getShort(int i) {
      return width == 1 ? (short) (Platform.getByte(null, values + i) & 0xFF)
          : Platform.getShort(null, values + 2L * i);
    }
    @Override public int getInt(int i) {
      return width == 2 ? Platform.getShort(null, values + 2L * i) & 0xFFFF
          : Platform.getInt(null, values + 4L * i);
    }
    @Override public long getLong(int i) {
      switch (width) {
        case 1: return signed ? Platform.getByte(null, values + i) : Platform.getByte(null, values + i) & 0xFF;
        case 2: return signed ? Platform.getShort(null, values + 2L * i)
            : Platform.getShort(null, values + 2L * i) & 0xFFFF;
        case 4: return signed ? Platform.getInt(null, values + 4L * i)
            : Platform.getInt(null, values + 4L * i) & 0xFFFFFFFFL;
        default: return Platform.getLong(null, values + 8L * i);
      }
    }
    @Override public Decimal getDecimal(int i, int p, int s) {   // uint64 as decimal(20, 0)
      long v = getLong(i);
      if (v >= 0) return Decimal.apply(BigDecimal.valueOf(v), p, s);
      return Decimal.apply(new BigDecimal(new BigInteger(Long.toUnsignedString(v))), p, s);
    }
  }

  /** 64-bit integers (int64, timestamps and durations in microseconds, times in nanoseconds). */
  static final class LongVec extends Vec {
    final long values;
    LongVec(DataType t, int n, long validity, int nulls, long values) {
      super(t, n, validity, nulls);
      this.values = values;
    }
    @Override public long getLong(int i) { return Platform.getLong(null, values + 8L * i); }
  }

  /** 32-bit integers (int32, date32). */
  static final class Int32Vec extends Vec {
    final long values;
    Int32Vec(DataType t, int n, long validity, int nulls, long values) {
      super(t, n, validity, nulls);
      this.values = values;
    }
    @Override public int getInt(int i) { return Platform.getInt(null, values + 4L * i); }
    @Override public long getLong(int i) { return Platform.getInt(null, values + 4L * i); }
  }

  /**
   * A 32- or 64-bit count in one unit read in another: value * mul, or value / div rounded down
   * (floor: instants before 1970 keep their place) or towards zero (durations).
   */
  static final class ScaledVec extends Vec {
    final long values;
    final int width;
    final long mul;
    final long div;
    final boolean floor;
    ScaledVec(DataType t, int n, long validity, int nulls, long values, int width, long mul,
              long div, boolean floor) {
      super(t, n, validity, nulls);
      this.values = values;
      this.width = width;
      this.mul = mul;
      this.div = div;
      this.floor = floor;
    }
    @Override public long getLong(int i) {
      long v = width == 4 ? Platform.getInt(null, values + 4L * i) : Platform.getLong(null, values + 8L * i);
      if (div != 1) return floor ? Math.floorDiv(v, div) : v / div;
      return v * mul;
    }
    @Override public int getInt(int i) { return (int) getLong(i); }
  }

  /** day_time_interval: (days, milliseconds) pairs as microseconds. */
  static final class DayTimeVec extends Vec {
    final long values;
    DayTimeVec(DataType t, int n, long validity, int nulls, long values) {
      super(t, n, validity, nulls);
      this.values = values;
    }
    @Override public long getLong(int i) {
      long days = Platform.getInt(null, values + 8L * i);
      long ms = Platform.getInt(null, values + 8L * i + 4);
      return days * 86_400_000_000L + ms * 1000L;
    }
  }

  static final class FloatVec extends Vec {
    final long values;
    final int width;
    FloatVec(DataType t, int n, long validity, int nulls, long values, int width) {
      super(t, n, validity, nulls);
      this.values = values;
      this.width = width;
    }
    @Override public float getFloat(int i) {
      if (width == 4) return Platform.getFloat(null, values + 4L * i);
      return halfToFloat(Platform.getShort(null, values + 2L * i));
    }
    @Override public double getDouble(int i) {
      return width == 8 ? Platform.getDouble(null, values + 8L * i) : getFloat(i);
    }
  }

  static float halfToFloat(short h) {
    int bits = h & 0xFFFF;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1F;
    int mant = bits & 0x3FF;
    if (exp == 0x1F) return Float.intBitsToFloat(sign | 0x7F800000 | (mant << 13));
    if (exp == 0) {
      if (mant == 0) return Float.intBitsToFloat(sign);
      float v = mant * (1.0f / (1 << 24));     // subnormal: mant * 2^-24
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }

  static final class DecimalVec extends Vec {
    final long values;
    final int width;
    DecimalVec(DataType t, int n, long validity, int nulls, long values, int width) {
      super(t, n, validity, nulls);
      this.values = values;
      this.width = width;
    }
    @Override public Decimal getDecimal(int i, int p, int s) {
      long at = values + (long) width * i;
      if (width == 4) return Decimal.createUnsafe(Platform.getInt(null, at), p, s);
      if (width == 8 || (p <= Decimal.MAX_LONG_DIGITS() && width == 16)) {
        return Decimal.createUnsafe(Platform.getLong(null, at), p, s);
      }
      byte[] be = new byte[width];
      for (int k = 0; k < width; k++) be[k] = Platform.getByte(null, at + width - 1 - k);
      return Decimal.apply(new BigDecimal(new BigInteger(be), s), p, s);
    }
  }

  /** Variable-length strings and binaries with 32- or 64-bit offsets. */
  static final class BinaryVec extends Vec {
    final long offsets;
    final long data;
    final boolean large;
    BinaryVec(DataType t, int n, long validity, int nulls, long offsets, long data, boolean large) {
      super(t, n, validity, nulls);
      this.offsets = offsets;
      this.data = data;
      this.large = large;
    }
    private long start(int i) {
      return large ? Platform.getLong(null, offsets + 8L * i) : Platform.getInt(null, offsets + 4L * i);
    }
    @Override public UTF8String getUTF8String(int i) {
      long s = start(i);
      return UTF8String.fromAddress(null, data + s, (int) (start(i + 1) - s));
    }
    @Override public byte[] getBinary(int i) {
      long s = start(i);
      byte[] out = new byte[(int) (start(i + 1) - s)];
      Platform.copyMemory(null, data + s, out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }

  /** Fixed-size binary: `width` bytes per slot. */
  static final class FixedBinaryVec extends Vec {
    final long data;
    final int width;
    FixedBinaryVec(DataType t, int n, long validity, int nulls, long data, int width) {
      super(t, n, validity, nulls);
      this.data = data;
      this.width = width;
    }
    @Override public UTF8String getUTF8String(int i) {
      return UTF8String.fromAddress(null, data + (long) width * i, width);
    }
    @Override public byte[] getBinary(int i) {
      byte[] out = new byte[width];
      Platform.copyMemory(null, data + (long) width * i, out, Platform.BYTE_ARRAY_OFFSET, width);
      return out;
    }
  }

  /** Binary and string views: 16-byte views, inline up to 12 bytes, else in a variadic buffer. */
  static final class ViewVec extends Vec {
    final long views;
    final long[] buffers;
    ViewVec(DataType t, int n, long validity, int nulls, long views, long[] buffers) {
      super(t, n, validity, nulls);
      this.views = views;
      this.buffers = buffers;
    }
    private long address(int i) {
      long v = views + 16L * i;
      int len = Platform.getInt(null, v);
      if (len <= 12) return v + 4;
      return buffers[Platform.getInt(null, v + 8)] + Platform.getInt(null, v + 12);
    }
    @Override public UTF8String getUTF8String(int i) {
      return UTF8String.fromAddress(null, address(i), Platform.getInt(null, views + 16L * i));
    }
    @Override public byte[] getBinary(int i) {
      byte[] out = new byte[Platform.getInt(null, views + 16L * i)];
      Platform.copyMemory(null, address(i), out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }

  /** list, large list, list view, fixed-size list: slot i is child[start(i), start(i) + size(i)). */
  static final class ListVec extends Vec {
    static final int LIST = 0, LARGE = 1, VIEW = 2, LARGE_VIEW = 3, FIXED = 4;
    final int kind;
    final long offsets;
    final long sizes;
    final int fixed;
    final ColumnVector child;
    ListVec(DataType t, int n, long validity, int nulls, int kind, long offsets, long sizes,
            int fixed, ColumnVector child) {
      super(t, n, validity, nulls);
      this.kind = kind;
      this.offsets = offsets;
      this.sizes = sizes;
      this.fixed = fixed;
      this.child = child;
    }
    int start(int i) {
      switch (kind) {
        case LIST: case VIEW: return Platform.getInt(null, offsets + 4L * i);
        case LARGE: case LARGE_VIEW: return (int) Platform.getLong(null, offsets + 8L * i);
        default: return fixed * i;
      }
    }
    int size(int i) {
      switch (kind) {
        case LIST: return Platform.getInt(null, offsets + 4L * i + 4) - Platform.getInt(null, offsets + 4L * i);
        case LARGE: return (int) (Platform.getLong(null, offsets + 8L * i + 8) - Platform.getLong(null, offsets + 8L * i));
        case VIEW: return Platform.getInt(null, sizes + 4L * i);
        case LARGE_VIEW: return (int) Platform.getLong(null, sizes + 8L * i);
        default: return fixed;
      }
    }
    @Override public ColumnarArray getArray(int i) { return new ColumnarArray(child, start(i), size(i)); }
  }

  static final class MapVec extends Vec {
    final ListVec list;      // offsets over the entries
    final ColumnVector keys;
    final ColumnVector values;
    MapVec(DataType t, ListVec list, ColumnVector keys, ColumnVector values) {
      super(t, list.length, list.validity, list.nullCount);
      this.list = list;
      this.keys = keys;
      this.values = values;
    }
    @Override public ColumnarMap getMap(int i) {
      return new ColumnarMap(keys, values, list.start(i), list.size(i));
    }
  }

  static final class StructVec extends Vec {
    final ColumnVector[] children;
    StructVec(DataType t, int n, long validity, int nulls, ColumnVector[] children) {
      super(t, n, validity, nulls);
      this.children = children;
    }
    @Override public ColumnVector getChild(int i) { return children[i]; }
  }

  /** A vector whose slot i is slot index(i) of another (dictionary and run-end encodings). */
  abstract static class Indirect extends Vec {
    final Vec values;
    Indirect(DataType t, int n, long validity, int nulls, Vec values) {
      super(t, n, validity, nulls);
      this.values = values;
    }
    abstract int index(int i);
    @Override public boolean isNullAt(int i) { return super.isNullAt(i) || values.isNullAt(index(i)); }
    @Override public boolean getBoolean(int i) { return values.getBoolean(index(i)); }
    @Override public byte getByte(int i) { return values.getByte(index(i)); }
    @Override public short getShort(int i) { return values.getShort(index(i)); }
    @Override public int getInt(int i) { return values.getInt(index(i)); }
    @Override public long getLong(int i) { return values.getLong(index(i)); }
    @Override public float getFloat(int i) { return values.getFloat(index(i)); }
    @Override public double getDouble(int i) { return values.getDouble(index(i)); }
    @Override public Decimal getDecimal(int i, int p, int s) { return values.getDecimal(index(i), p, s); }
    @Override public UTF8String getUTF8String(int i) { return values.getUTF8String(index(i)); }
    @Override public byte[] getBinary(int i) { return values.getBinary(index(i)); }
    @Override public ColumnarArray getArray(int i) { return values.getArray(index(i)); }
    @Override public ColumnarMap getMap(int i) { return values.getMap(index(i)); }
    @Override public ColumnVector getChild(int c) {
      throw new UnsupportedOperationException("structs under a dictionary or run-end encoding");
    }
  }

  static final class DictVec extends Indirect {
    final IntVec indices;
    DictVec(DataType t, IntVec indices, Vec dictionary, int nulls) {
      super(t, indices.length, indices.validity, indices.nullCount, dictionary);
      this.indices = indices;
      this.nullCount = nulls;
    }
    @Override int index(int i) { return (int) indices.getLong(i); }
    @Override public boolean isNullAt(int i) { return indices.isNullAt(i) || values.isNullAt(index(i)); }
  }

  /**
   * A dictionary grown by delta dictionary batches: its parts end to end. Each delta gives a new
   * ConcatVec (batches already read keep the one they were read with), but the views share one
   * growable list of parts, appended to in place while the newest view grows: k deltas cost O(k),
   * not a copy of every part per delta.
   */
  static final class ConcatVec extends Vec {
    /** The parts and where each starts; views see the first `count` of them, which never change. */
    private static final class Parts {
      Vec[] vecs = new Vec[4];
      int[] starts = new int[4];
      int size;

      void add(Vec v, int start) {
        if (size == vecs.length) {
          vecs = java.util.Arrays.copyOf(vecs, size * 2);
          starts = java.util.Arrays.copyOf(starts, size * 2);
        }
        vecs[size] = v;
        starts[size] = start;
        size++;
      }
    }

    private final Parts shared;
    private final int count;                // the parts this view holds
    private int last;                       // the part of the last lookup: scans go forward

    private ConcatVec(DataType t, Parts shared, int length, int nulls) {
      super(t, length, 0, nulls);
      this.shared = shared;
      this.count = shared.size;
    }

    /** `dictionary` followed by the values of `delta`; `where` names them in an error. */
    static Vec of(Vec dictionary, Vec delta, String where) {
      if (delta.length == 0) return dictionary;              // nothing to append
      long length = (long) dictionary.length + delta.length;
      if (length > Integer.MAX_VALUE) {
        throw new IpcException("arrowipc: " + where + ": a delta makes the dictionary " + length
            + " values long, more than a column can index");
      }
      Parts parts;
      if (dictionary instanceof ConcatVec && ((ConcatVec) dictionary).count == ((ConcatVec) dictionary).shared.size) {
        parts = ((ConcatVec) dictionary).shared;             // the newest view: append in place
      } else {
        parts = new Parts();
        if (dictionary instanceof ConcatVec) {
          ConcatVec c = (ConcatVec) dictionary;
          for (int k = 0; k < c.count; k++) parts.add(c.shared.vecs[k], c.shared.starts[k]);
        } else {
          parts.add(dictionary, 0);
        }
      }
      parts.add(delta, dictionary.length);
      return new ConcatVec(dictionary.dataType(), parts, (int) length,
          dictionary.nullCount + delta.nullCount);
    }

    private int part(int i) {
      int[] starts = shared.starts;
      int k = last;
      if (i >= starts[k] && (k + 1 == count || i < starts[k + 1])) return k;
      int lo = 0, hi = count - 1;
      while (lo < hi) {
        int mid = (lo + hi + 1) >>> 1;
        if (starts[mid] <= i) lo = mid; else hi = mid - 1;
      }
      last = lo;
      return lo;
    }

    private Vec at(int k) {
      return shared.vecs[k];
    }

    private int offset(int i, int k) {
      return i - shared.starts[k];
    }

    @Override public boolean isNullAt(int i) { int k = part(i); return at(k).isNullAt(offset(i, k)); }
    @Override public boolean getBoolean(int i) { int k = part(i); return at(k).getBoolean(offset(i, k)); }
    @Override public byte getByte(int i) { int k = part(i); return at(k).getByte(offset(i, k)); }
    @Override public short getShort(int i) { int k = part(i); return at(k).getShort(offset(i, k)); }
    @Override public int getInt(int i) { int k = part(i); return at(k).getInt(offset(i, k)); }
    @Override public long getLong(int i) { int k = part(i); return at(k).getLong(offset(i, k)); }
    @Override public float getFloat(int i) { int k = part(i); return at(k).getFloat(offset(i, k)); }
    @Override public double getDouble(int i) { int k = part(i); return at(k).getDouble(offset(i, k)); }
    @Override public Decimal getDecimal(int i, int p, int s) {
      int k = part(i);
      return at(k).getDecimal(offset(i, k), p, s);
    }
    @Override public UTF8String getUTF8String(int i) { int k = part(i); return at(k).getUTF8String(offset(i, k)); }
    @Override public byte[] getBinary(int i) { int k = part(i); return at(k).getBinary(offset(i, k)); }
    @Override public ColumnarArray getArray(int i) { int k = part(i); return at(k).getArray(offset(i, k)); }
    @Override public ColumnarMap getMap(int i) { int k = part(i); return at(k).getMap(offset(i, k)); }
  }

  static final class RunEndVec extends Vec {
    final IntVec runEnds;
    final Vec values;
    final int runs;
    private int last;                       // the run of the last lookup: scans go forward
    RunEndVec(DataType t, int n, IntVec runEnds, int runs, Vec values, int nulls) {
      super(t, n, 0, nulls);
      this.runEnds = runEnds;
      this.runs = runs;
      this.values = values;
    }
    int index(int i) {
      int r = last;
      if (i < runEnds.getLong(r) && (r == 0 || i >= runEnds.getLong(r - 1))) return r;
      int lo = 0, hi = runs - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (runEnds.getLong(mid) <= i) lo = mid + 1; else hi = mid;
      }
      last = lo;
      return lo;
    }
    @Override public boolean isNullAt(int i) { return values.isNullAt(index(i)); }
    @Override public boolean getBoolean(int i) { return values.getBoolean(index(i)); }
    @Override public byte getByte(int i) { return values.getByte(index(i)); }
    @Override public short getShort(int i) { return values.getShort(index(i)); }
    @Override public int getInt(int i) { return values.getInt(index(i)); }
    @Override public long getLong(int i) { return values.getLong(index(i)); }
    @Override public float getFloat(int i) { return values.getFloat(index(i)); }
    @Override public double getDouble(int i) { return values.getDouble(index(i)); }
    @Override public Decimal getDecimal(int i, int p, int s) { return values.getDecimal(index(i), p, s); }
    @Override public UTF8String getUTF8String(int i) { return values.getUTF8String(index(i)); }
    @Override public byte[] getBinary(int i) { return values.getBinary(index(i)); }
    @Override public ColumnarArray getArray(int i) { return values.getArray(index(i)); }
    @Override public ColumnarMap getMap(int i) { return values.getMap(index(i)); }
  }
}
