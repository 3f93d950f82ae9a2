// Where the WebSocket channels listen: the sockets serve them, and the picker's realtime metadata
// operation tells the app where to connect.

/** The customer's order-tracking channel (the spec's WebSocket channel). */
export const TRACKING_PATH = '/ws/orders/tracking/';
/** The picker app's channel of queue and session events. */
export const PICKER_CHANNEL_PATH = '/ws/picker/';
