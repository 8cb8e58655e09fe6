package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.intParam;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.HotelView;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** Hotel rooms (issue 13 item 4): a hotel's rooms, and one room's devices with their merged status (seed 004). */
public record HotelRoutes(HotelView hotels) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/hotels/:hotel/rooms").handler(this::rooms);
    r.get("/api/v1/hotels/:hotel/rooms/:room").handler(this::room);
  }

  private void rooms(RoutingContext ctx) {
    String hotel = ctx.pathParam("hotel");
    hotels.rooms(hotel, intParam(ctx, "limit"))
        .onSuccess(rooms -> json(ctx, 200, new JsonObject().put("hotel_id", hotel).put("rooms", rooms))).onFailure(ctx::fail);
  }

  private void room(RoutingContext ctx) {
    String hotel = ctx.pathParam("hotel");
    String room = ctx.pathParam("room");
    hotels.room(hotel, room, intParam(ctx, "limit")).onSuccess(devices -> {
      if (devices.isEmpty()) {
        error(ctx, 404, "no device of hotel '" + hotel + "' reports room '" + room + "': GET /api/v1/hotels/" + hotel + "/rooms lists its rooms");
      } else {
        json(ctx, 200, new JsonObject().put("hotel_id", hotel).put("room_id", room).put("devices", devices));
      }
    }).onFailure(ctx::fail);
  }
}
