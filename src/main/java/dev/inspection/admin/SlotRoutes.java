package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.common.ApiError;
import dev.inspection.scheduler.ClusterView;
import dev.inspection.scheduler.DeviceStore;
import dev.inspection.scheduler.QueueSampler;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.function.IntSupplier;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;

/** Slots: owner, epoch, state and backlog of each ({@code /slots}), and one slot's history. */
public record SlotRoutes(DeviceStore devices, ClusterView view, QueueSampler queues, IntSupplier totalSlots) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/slots").handler(this::slots);
    r.get("/api/v1/slots/:id/history").handler(this::history);
  }

  private void slots(RoutingContext ctx) {
    devices.slots().compose(a -> view.slotMetrics().map(m -> withMetrics(a, m)))
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("slots", a))).onFailure(ctx::fail);
  }

  /** Adds each slot's queue backlog and its owner's mailbox, lag and rate (null while no owner reports). */
  private JsonArray withMetrics(JsonArray slots, Map<Integer, JsonObject> byOwner) {
    for (int i = 0; i < slots.size(); i++) {
      JsonObject slot = slots.getJsonObject(i);
      int id = slot.getInteger("slot_id");
      JsonObject owner = byOwner.get(id);
      slot.put("backlog", queues.depth(id)).put("mailbox", owner == null ? null : owner.getLong("mailbox"))
          .put("lag_ms", owner == null ? null : owner.getLong("lag_ms")).put("rate", owner == null ? null : owner.getDouble("rate"));
    }
    return slots;
  }

  private void history(RoutingContext ctx) {
    int slot = Integer.parseInt(ctx.pathParam("id")); // a whole number >= 0: the contract checked it
    int total = totalSlots.getAsInt();
    if (slot >= total) throw new ApiError(404, "no slot " + slot + ": slots are 0 .. " + (total - 1));
    view.slotHistory(slot, 200).onSuccess(a -> json(ctx, 200, new JsonObject().put("slot_id", slot).put("history", a)))
        .onFailure(ctx::fail);
  }
}
