package io.arrowipc.spark;

import java.io.IOException;

import org.apache.arrow.flatbuf.MessageHeader;

/**
 * Whether an input that is arriving in a streamed directory has been written completely: a file
 * format input once its footer and trailing magic are there, a stream once its end-of-stream
 * marker follows its messages. A writer that is still going fails both tests, so it is left for
 * a later trigger; so is a damaged file, which never becomes readable.
 */
final class StreamFiles {
  private StreamFiles() {}

  static boolean isComplete(String path) {
    // the file format: footer and magic checked here (and kept for planning, FooterCache)
    try (IpcFile f = FooterCache.open(path)) {
      if (f.fileFormat) return true;
      long at = f.firstMessage;
      while (at < f.size) {
        IpcFile.Framed m = f.readMessage(at);
        if (m == null) return true;                 // the end-of-stream marker
        if (m.message.headerType() == MessageHeader.Schema) return false;
        at = m.end;
      }
      return false;                                 // the messages so far, but no marker yet
    } catch (IpcException | IOException e) {
      return false;
    }
  }
}
