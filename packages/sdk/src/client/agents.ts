import type {
  AgentProfile,
  DeactivateResponse,
  InvocationConfig,
  PaymentAddress,
  UpdateInvocationConfigRequest,
  UpdateInvocationConfigResponse,
  UpdateProfileRequest,
} from '../types.js';
import { enc, type Transport } from './transport.js';

export function getAgent(transport: Transport, did: string): Promise<AgentProfile> {
  return transport.request('GET', `/api/agents/${enc(did)}`);
}

export function updateAgent(
  transport: Transport,
  patch: UpdateProfileRequest,
  did: string,
): Promise<AgentProfile> {
  return transport.request('PUT', `/api/agents/${enc(did)}`, { body: patch, auth: true });
}

export function deactivate(transport: Transport, did: string): Promise<DeactivateResponse> {
  return transport.request('DELETE', `/api/agents/${enc(did)}`, { auth: true });
}

export function getInvocation(transport: Transport, did: string): Promise<InvocationConfig> {
  return transport.request('GET', `/api/agents/${enc(did)}/invocation`);
}

export function setInvocation(
  transport: Transport,
  config: UpdateInvocationConfigRequest,
  did: string,
): Promise<UpdateInvocationConfigResponse> {
  return transport.request('PUT', `/api/agents/${enc(did)}/invocation`, { body: config, auth: true });
}

export function getPaymentAddress(transport: Transport, did: string): Promise<PaymentAddress> {
  return transport.request('GET', `/api/agents/${enc(did)}/payment-address`);
}
