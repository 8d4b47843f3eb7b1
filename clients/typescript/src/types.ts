/**
 * The API's objects and request bodies. Placeholder until the server's OpenAPI document is on
 * main; then these become names for the generated types in ./openapi.ts.
 */

export type PaymentStatus = "pending" | "settling" | "confirmed" | "underpaid" | "overpaid" | "expired" | "failed";

export interface LineItem {
  description: string;
  unit_amount: string;
  quantity: number;
  amount: string;
}

export interface Payment {
  id: string;
  object: "payment";
  status: PaymentStatus;
  amount: string;
  amount_received: string | null;
  currency: "USDC";
  pay_url: string;
  deposit_address: string;
  fee_bps: number;
  bridge_fee: string;
  chain: string;
  chain_id: number;
  token_address: string;
  description: string | null;
  reference: string | null;
  success_url: string | null;
  customer_email: string | null;
  customer_name: string | null;
  invoice_number: string | null;
  due_at: string | null;
  line_items: LineItem[] | null;
  payment_link: string | null;
  transfers: unknown[];
  cross_chain_transfers: unknown[];
  expires_at: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, string> | null;
}

export interface CreatePaymentParams {
  amount?: string | null;
  line_items?: Array<{ description: string; unit_amount: string; quantity: number }> | null;
  description?: string | null;
  reference?: string | null;
  success_url?: string | null;
  customer_email?: string | null;
  customer_name?: string | null;
  invoice_number?: string | null;
  due_at?: string | null;
  metadata?: Record<string, string> | null;
}

export interface ListPaymentsParams {
  limit?: number;
  starting_after?: string;
  status?: PaymentStatus;
  "created[gte]"?: string;
  "created[lt]"?: string;
  payment_link?: string;
}

export interface PaymentLink {
  id: string;
  object: "payment_link";
  url: string;
  active: boolean;
  amount: string | null;
  min_amount: string | null;
  max_amount: string | null;
  currency: "USDC";
  description: string | null;
  line_items: LineItem[] | null;
  success_url: string | null;
  created_at: string;
  updated_at: string;
  metadata: Record<string, string> | null;
}

export interface CreatePaymentLinkParams {
  amount?: string | null;
  line_items?: Array<{ description: string; unit_amount: string; quantity: number }> | null;
  min_amount?: string | null;
  max_amount?: string | null;
  description?: string | null;
  success_url?: string | null;
  metadata?: Record<string, string> | null;
}

export interface UpdatePaymentLinkParams {
  active: boolean;
}

export interface ListParams {
  limit?: number;
  starting_after?: string;
}

export interface WebhookEndpoint {
  id: string;
  object: "webhook_endpoint";
  url: string;
  status: "enabled" | "disabled";
  created_at: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  secret: string;
}

export interface CreateWebhookEndpointParams {
  url: string;
}

export interface DeletedWebhookEndpoint {
  id: string;
  object: "webhook_endpoint";
  deleted: true;
}

export interface Delivery {
  id: string;
  object: "webhook_delivery";
  endpoint_id: string;
  event_id: string;
  event_type: string;
  payment_id: string | null;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Array<{
    attempted_at: string;
    response_status: number | null;
    error: string | null;
    duration_ms: number | null;
    next_retry_at: string | null;
  }>;
}

export interface WebhookEndpointTest {
  event_id: string;
  delivery: Delivery;
}

export type EventType =
  | "payment.settling"
  | "payment.confirmed"
  | "payment.underpaid"
  | "payment.overpaid"
  | "payment.expired"
  | "payment.failed"
  | "payment.funds_received"
  | "account.updated"
  | "test";

export interface Event {
  id: string;
  object: "event";
  type: EventType;
  created_at: string;
  data: { payment: Payment } | { message: string } | { account: unknown; previous_attributes: unknown };
}

export interface ListEventsParams extends ListParams {
  type?: EventType;
}
