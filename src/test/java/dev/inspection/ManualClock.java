package dev.inspection;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A UTC clock that moves only when a test says so. */
public final class ManualClock extends Clock {
  private volatile long nowMs;

  public ManualClock(long nowMs) {
    this.nowMs = nowMs;
  }

  public void set(long ms) {
    nowMs = ms;
  }

  public void advance(long ms) {
    nowMs += ms;
  }

  @Override
  public long millis() {
    return nowMs;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(nowMs);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
