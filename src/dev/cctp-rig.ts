/**
 * A local CCTP V2 (contracts/test/TestMessageTransmitterV2.sol and TestTokenMessengerV2.sol) for
 * the tests and `stablegate dev`. As on real CCTP, the two contracts have the same addresses on
 * every chain: they are the first two CREATEs of one dedicated deployer key, so any chain where
 * that key is unused gets the addresses below. Artifacts come from src/chain/contracts.ts (JSON
 * imports), so this works inside the compiled binary.
 */
import {
  type Account,
  type Address,
  type Chain,
  encodePacked,
  getAddress,
  getContractAddress,
  type Hex,
  keccak256,
  maxUint256,
  type PublicClient,
  pad,
  parseAbi,
  parseEther,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { messageReceivedParams } from "../chain/cctp-abi.ts";
import { artifacts } from "../chain/contracts.ts";
import { abiParams } from "../lib/abi-params.ts";

/**
 * Account 9 of anvil's default mnemonic ("test test ... junk"), 0xa0Ee7A142d267C1f36714E4a8F75612F20a79720.
 * Funded on every anvil, and the last of the ten, so the tests and `stablegate dev` (which count
 * up from account 0, see ANVIL_KEYS) never spend its nonces 0 and 1 before the rig does.
 */
export const CCTP_DEPLOYER_KEY: Hex = "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6";
/**
 * A default attester for `stablegate dev`: account 8 of the same mnemonic
 * (0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f). It only signs; tests may use any key.
 */
export const CCTP_DEV_ATTESTER_KEY: Hex = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97";

const deployer = privateKeyToAccount(CCTP_DEPLOYER_KEY);

/** The transmitter is the deployer's nonce 0, the messenger its nonce 1, on every chain. */
export const cctpAddresses = {
  messageTransmitter: getContractAddress({ from: deployer.address, nonce: 0n }),
  tokenMessenger: getContractAddress({ from: deployer.address, nonce: 1n }),
} as const;

const sendMessageParams = abiParams(
  "uint32 destinationDomain",
  "bytes32 recipient",
  "bytes32 destinationCaller",
  "uint32 minFinalityThreshold",
  "bytes messageBody",
);

/** The test transmitter's ABI, typed for viem; the subset real CCTP V2 shares has the same shape. */
export const testMessageTransmitterV2Abi = parseAbi([
  "constructor(uint32 localDomain_, address attester)",
  "function version() view returns (uint32)",
  "function FINALITY_THRESHOLD_FINALIZED() view returns (uint32)",
  "function localDomain() view returns (uint32)",
  "function owner() view returns (address)",
  "function signatureThreshold() view returns (uint256)",
  "function isEnabledAttester(address) view returns (bool)",
  "function usedNonces(bytes32) view returns (uint256)",
  "function enableAttester(address attester)",
  "function disableAttester(address attester)",
  "function setSignatureThreshold(uint256 newThreshold)",
  `function sendMessage(${sendMessageParams})`,
  "function receiveMessage(bytes message, bytes attestation) returns (bool)",
  "event MessageSent(bytes message)",
  `event MessageReceived(${messageReceivedParams})`,
  "event AttesterEnabled(address indexed attester)",
  "event AttesterDisabled(address indexed attester)",
  "event SignatureThresholdUpdated(uint256 oldThreshold, uint256 newThreshold)",
]);

const depositForBurnParams = abiParams(
  "uint256 amount",
  "uint32 destinationDomain",
  "bytes32 mintRecipient",
  "address burnToken",
  "bytes32 destinationCaller",
  "uint256 maxFee",
  "uint32 minFinalityThreshold",
);

const handleReceiveFinalizedParams = abiParams("uint32 remoteDomain", "bytes32 sender", "uint32", "bytes messageBody");

const handleReceiveUnfinalizedParams = abiParams(
  "uint32 remoteDomain",
  "bytes32 sender",
  "uint32 finalityThresholdExecuted",
  "bytes messageBody",
);

const depositForBurnEventParams = abiParams(
  "address indexed burnToken",
  "uint256 amount",
  "address indexed depositor",
  "bytes32 mintRecipient",
  "uint32 destinationDomain",
  "bytes32 destinationTokenMessenger",
  "bytes32 destinationCaller",
  "uint256 maxFee",
  "uint32 indexed minFinalityThreshold",
  "bytes hookData",
);

const mintAndWithdrawParams = abiParams(
  "address indexed mintRecipient",
  "uint256 amount",
  "address indexed mintToken",
  "uint256 feeCollected",
);

/** The test messenger's ABI, typed for viem; `depositForBurn` and its events are CCTP V2's. */
export const testTokenMessengerV2Abi = parseAbi([
  "constructor(address localMessageTransmitter_)",
  "function messageBodyVersion() view returns (uint32)",
  "function MIN_FINALITY_THRESHOLD() view returns (uint32)",
  "function MIN_FEE_MULTIPLIER() view returns (uint256)",
  "function BURN_ADDRESS() view returns (address)",
  "function localMessageTransmitter() view returns (address)",
  "function owner() view returns (address)",
  "function feeRecipient() view returns (address)",
  "function localMinter() view returns (address)",
  "function minFee() view returns (uint256)",
  "function remoteTokenMessengers(uint32) view returns (bytes32)",
  "function remoteTokensToLocalTokens(bytes32) view returns (address)",
  "function burnLimitsPerMessage(address) view returns (uint256)",
  "function linkTokenPair(address localToken, uint32 remoteDomain, bytes32 remoteToken)",
  "function setMaxBurnAmountPerMessage(address localToken, uint256 burnLimitPerMessage)",
  "function addRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger)",
  "function removeRemoteTokenMessenger(uint32 domain)",
  "function addLocalMinter(address newLocalMinter)",
  "function removeLocalMinter()",
  "function setFeeRecipient(address feeRecipient_)",
  "function setMinFee(uint256 minFee_)",
  "function getMinFeeAmount(uint256 amount) view returns (uint256)",
  `function depositForBurn(${depositForBurnParams})`,
  `function depositForBurnWithHook(${depositForBurnParams}, bytes hookData)`,
  `function handleReceiveFinalizedMessage(${handleReceiveFinalizedParams}) returns (bool)`,
  `function handleReceiveUnfinalizedMessage(${handleReceiveUnfinalizedParams}) returns (bool)`,
  `event DepositForBurn(${depositForBurnEventParams})`,
  `event MintAndWithdraw(${mintAndWithdrawParams})`,
  "event TokenPairLinked(address localToken, uint32 remoteDomain, bytes32 remoteToken)",
  "event SetBurnLimitPerMessage(address indexed token, uint256 burnLimitPerMessage)",
  "event RemoteTokenMessengerAdded(uint32 domain, bytes32 tokenMessenger)",
  "event RemoteTokenMessengerRemoved(uint32 domain, bytes32 tokenMessenger)",
  "event LocalMinterAdded(address localMinter)",
  "event LocalMinterRemoved(address localMinter)",
  "event MinFeeSet(uint256 minFee)",
]);

export type CctpDeployment = { domain: number; messageTransmitter: Address; tokenMessenger: Address };

/**
 * Deploys the rig on the chain behind the clients unless it is there already, then makes sure
 * each domain of `remoteUsdc` has its messenger registered (burns to it are allowed), burns of
 * `remoteUsdc[domain]` there mint `usdc` here, `usdc` is burnable and `attester` is enabled. Safe to
 * call again (say with one more remote). `walletClient` supplies the transport and chain, and
 * tops up the deployer if it has no ether (on anvil it always has).
 */
export async function deployCctp(args: {
  publicClient: PublicClient;
  walletClient: WalletClient<Transport, Chain | undefined, Account>;
  domain: number;
  usdc: Address;
  remoteUsdc: Record<number, Address>;
  attester: Address;
}): Promise<CctpDeployment> {
  const { publicClient, walletClient, domain, usdc, attester } = args;
  const { messageTransmitter, tokenMessenger } = cctpAddresses;
  const chain = walletClient.chain ?? null;
  const send = async (hash: Promise<Hex>, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
    if (receipt.status !== "success") throw new Error(`CCTP rig: ${what} reverted (tx ${receipt.transactionHash})`);
  };

  const nonce = await publicClient.getTransactionCount({ address: deployer.address });
  if (nonce < 2 && (await publicClient.getBalance({ address: deployer.address })) < parseEther("0.1")) {
    const hash = walletClient.sendTransaction({
      account: walletClient.account,
      chain,
      to: deployer.address,
      value: parseEther("1"),
    });
    await send(hash, "funding the deployer");
  }
  if (nonce === 0) {
    const { abi, bytecode } = artifacts.TestMessageTransmitterV2;
    const hash = walletClient.deployContract({
      account: deployer,
      chain,
      abi,
      bytecode,
      args: [domain, attester],
    });
    await send(hash, "deploying the transmitter");
  }
  if (nonce <= 1) {
    const { abi, bytecode } = artifacts.TestTokenMessengerV2;
    const hash = walletClient.deployContract({ account: deployer, chain, abi, bytecode, args: [messageTransmitter] });
    await send(hash, "deploying the messenger");
  }
  const existing = await deployedDomain(publicClient);
  if (existing !== domain) {
    throw new Error(
      existing === undefined
        ? `CCTP rig: the deployer ${deployer.address} spent nonces 0-1 on this chain on something else, ` +
            `so the fixed addresses are taken`
        : `CCTP rig: already deployed on this chain for domain ${existing}, not ${domain}`,
    );
  }

  const messenger = { address: tokenMessenger, abi: testTokenMessengerV2Abi } as const;
  for (const [remote, remoteToken] of Object.entries(args.remoteUsdc)) {
    const remoteDomain = Number(remote);
    // The messenger is at the same address on every chain, so the remote one is itself.
    const remoteMessenger = await publicClient.readContract({
      ...messenger,
      functionName: "remoteTokenMessengers",
      args: [remoteDomain],
    });
    if (remoteMessenger !== pad(tokenMessenger).toLowerCase()) {
      const hash = walletClient.writeContract({
        account: deployer,
        chain,
        ...messenger,
        functionName: "addRemoteTokenMessenger",
        args: [remoteDomain, pad(tokenMessenger)],
      });
      await send(hash, `registering domain ${remoteDomain}'s messenger`);
    }
    const link = [usdc, remoteDomain, pad(getAddress(remoteToken))] as const;
    const linked = await publicClient.readContract({
      ...messenger,
      functionName: "remoteTokensToLocalTokens",
      args: [tokenPairKey(link[1], link[2])],
    });
    if (getAddress(linked) !== getAddress(usdc)) {
      const hash = walletClient.writeContract({
        account: deployer,
        chain,
        ...messenger,
        functionName: "linkTokenPair",
        args: link,
      });
      await send(hash, `linking domain ${remoteDomain}'s USDC`);
    }
  }
  // The rig sets no burn limit of its own (Circle's are millions of USDC); tests may lower it.
  if ((await publicClient.readContract({ ...messenger, functionName: "burnLimitsPerMessage", args: [usdc] })) === 0n) {
    const hash = walletClient.writeContract({
      account: deployer,
      chain,
      ...messenger,
      functionName: "setMaxBurnAmountPerMessage",
      args: [usdc, maxUint256],
    });
    await send(hash, "making USDC burnable");
  }
  const transmitter = { address: messageTransmitter, abi: testMessageTransmitterV2Abi } as const;
  if (!(await publicClient.readContract({ ...transmitter, functionName: "isEnabledAttester", args: [attester] }))) {
    const hash = walletClient.writeContract({
      account: deployer,
      chain,
      ...transmitter,
      functionName: "enableAttester",
      args: [attester],
    });
    await send(hash, "enabling the attester");
  }
  return { domain, messageTransmitter, tokenMessenger };
}

/** keccak256(abi.encodePacked(uint32 remoteDomain, bytes32 remoteToken)), the messenger's mapping key. */
function tokenPairKey(remoteDomain: number, remoteToken: Hex): Hex {
  return keccak256(encodePacked(["uint32", "bytes32"], [remoteDomain, remoteToken]));
}

/** The transmitter's domain if both rig contracts have code at the fixed addresses. */
async function deployedDomain(client: PublicClient): Promise<number | undefined> {
  for (const address of Object.values(cctpAddresses)) {
    const code = await client.getCode({ address });
    if (code === undefined || code === "0x") return undefined;
  }
  return client.readContract({
    address: cctpAddresses.messageTransmitter,
    abi: testMessageTransmitterV2Abi,
    functionName: "localDomain",
  });
}
