package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeviceSeqsTest {

  private static List<String> touched(DeviceSeqs s) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < s.touched(); i++) out.add(s.touchedDevice(i) + "=" + s.touchedLast(i));
    return out;
  }

  @Test
  void numbersCountFromOnePerDeviceAndEachAppendNamesEveryDeviceOnceWithItsLastNumber() {
    DeviceSeqs s = new DeviceSeqs();
    s.begin();
    assertEquals(1, s.next("a"));
    assertEquals(1, s.next("b"));
    assertEquals(2, s.next("a"));
    assertEquals(3, s.next("a"));
    assertEquals(List.of("a=3", "b=1"), touched(s));
    s.begin();
    assertEquals(2, s.next("b"));
    assertEquals(List.of("b=2"), touched(s));
    assertEquals(3, s.last("a"));
  }

  @Test
  void aFailedAppendGivesBackEveryNumberItHandedOut() {
    DeviceSeqs s = new DeviceSeqs();
    s.begin();
    s.next("a");
    s.next("a");
    s.begin();
    s.next("a");
    s.next("new");
    s.next("new");
    s.rollBack();
    assertEquals(2, s.last("a"));
    assertEquals(0, s.last("new"));
    assertEquals(0, s.touched());
    s.begin();
    assertEquals(3, s.next("a"), "the number given back is handed out again");
    assertEquals(1, s.next("new"));
  }

  @Test
  void numbersReadFromTheFileNeverLowerOneKnownAndAreContinued() {
    DeviceSeqs s = new DeviceSeqs();
    s.atLeast("a", 7);
    s.atLeast("a", 5);
    assertEquals(7, s.last("a"));
    s.begin();
    assertEquals(8, s.next("a"));
    s.rollBack();
    assertEquals(7, s.last("a"), "a device known from the file stays known after a failed append");
  }
}
