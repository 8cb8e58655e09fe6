package dev.inspection.messaging;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/** {@code slot = CRC32(UTF-8 bytes of device_id) mod total_slots} (DESIGN.md §3): any language can agree on it. */
public final class SlotHash {
  private SlotHash() {}

  public static int slotOf(String deviceId, int totalSlots) {
    CRC32 crc = new CRC32();
    crc.update(deviceId.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % totalSlots);
  }
}
