// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IMessageTransmitterV2, ITokenMessengerV2, ITokenMinterV2} from "./DepositForwarderV2.sol";
import {DepositForwarderV3} from "./DepositForwarderV3.sol";

/// @notice Version 3 of the deposit addresses: as version 2 (one address on every chain, USDC on a
/// CCTP source chain burned only to that same address on the settlement chain), with two changes.
/// A fee that cannot be paid (USDC's blocklist holds the fee recipient) no longer stops the
/// settlement: the payout gets everything and `FeeSkipped` says so. And the salt commits to the
/// source chains `bridge` may ask Circle's fast finality from, so nobody can make a deposit
/// address pay the fast fee where the operator chose standard. Every function is callable by
/// anyone and can only move funds where the salt says.
contract DepositFactoryV3 {
    /// Circle's lowest finality threshold for a standard (finalized) transfer; below it is fast.
    uint32 public constant FINALITY_STANDARD = 2000;

    /// Everything a deposit address commits to; salt = keccak256(abi.encode(terms)).
    struct Terms {
        bytes32 paymentId;
        /// The settlement chain's USDC: the only token `settle` forwards and `recover` refuses.
        address token;
        address payout;
        address feeRecipient;
        uint16 feeBps;
        /// CCTP domain of the settlement chain: where `bridge` mints, to this same address.
        uint32 settlementDomain;
        /// CCTP V2 TokenMessengerV2 (the same address on every chain); zero: the address never bridges.
        address tokenMessenger;
        /// `bridge` refuses a maxFee above this share of the amount burned.
        uint16 maxBridgeFeeBps;
        /// Bit d set: `bridge` on the chain of CCTP domain d may ask for fast finality (below
        /// FINALITY_STANDARD). Standard finality is allowed from every domain.
        uint256 fastDomains;
    }

    /// The forwarder implementation every clone delegates to (this contract's first CREATE).
    DepositForwarderV3 public immutable IMPLEMENTATION;
    /// keccak256 of the clone's init code, for computing deposit addresses.
    bytes32 private immutable CLONE_CODE_HASH;

    /// `fee` is what the fee recipient was paid: zero when the fee was skipped.
    event Settled(
        bytes32 indexed paymentId,
        address indexed depositAddress,
        address token,
        address payout,
        uint256 amount,
        uint256 fee
    );
    /// The fee transfer failed, so `fee` went to the payout with the rest.
    event FeeSkipped(bytes32 indexed paymentId, address indexed depositAddress, address feeRecipient, uint256 fee);
    event Recovered(
        bytes32 indexed paymentId, address indexed depositAddress, address token, address payout, uint256 amount
    );
    event Bridged(
        bytes32 indexed paymentId,
        address indexed depositAddress,
        address burnToken,
        uint256 amount,
        uint32 destinationDomain,
        uint256 maxFee,
        uint32 minFinalityThreshold
    );

    error FeeTooHigh(uint16 feeBps);
    error MissingFeeRecipient();
    error MissingPayout();
    /// `recover` cannot take the committed token: it goes through `settle`, with its fee.
    error CommittedToken();
    /// `bridge` on the settlement chain itself: there the funds go through `settle`.
    error SettlementChain();
    /// `bridge` where the committed messenger has no code: these terms never bridge from here.
    error NoMessenger();
    /// `recover` cannot take a token the CCTP messenger burns on this chain: it goes through `bridge`.
    error BridgeableToken(address token);
    /// `bridge` was asked for a maxFee above the committed bound for the amount burned.
    error BridgeFeeTooHigh(uint256 maxFee, uint256 amount, uint16 maxBridgeFeeBps);
    /// `bridge` was asked for fast finality from a domain whose bit `fastDomains` does not set.
    error FinalityNotAllowed(uint32 domain, uint32 minFinalityThreshold);
    error DeployFailed();

    constructor() {
        IMPLEMENTATION = new DepositForwarderV3();
        CLONE_CODE_HASH = keccak256(_cloneCode());
    }

    function salt(Terms calldata t) public pure returns (bytes32) {
        return keccak256(abi.encode(t));
    }

    function depositAddress(Terms calldata t) public view returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt(t), CLONE_CODE_HASH)))));
    }

    /// Forwards the whole committed-token balance of the deposit address (deploying it first if
    /// needed): the fee to `feeRecipient`, the rest to `payout`; all of it to `payout`, with
    /// `FeeSkipped`, when the fee transfer fails. Returns the fee actually paid.
    function settle(Terms calldata t) external returns (address deposit, uint256 amount, uint256 fee) {
        deposit = _deploy(t);
        uint256 skipped;
        (amount, fee, skipped) =
            DepositForwarderV3(payable(deposit)).forward(t.token, t.payout, t.feeRecipient, t.feeBps);
        if (skipped > 0) emit FeeSkipped(t.paymentId, deposit, t.feeRecipient, skipped);
        emit Settled(t.paymentId, deposit, t.token, t.payout, amount, fee);
    }

    /// Sends the whole balance of `otherToken` (native coin when it is address(0)) at the deposit
    /// address to `payout` on this chain, without fee: recovery of whatever was sent by mistake.
    /// Refuses the committed token, and any token `bridge` can take from here to the settlement
    /// domain (USDC on a CCTP source chain): those reach the payout only through `bridge` and
    /// `settle`, with the fee. A token no route bridges can always be recovered.
    function recover(Terms calldata t, address otherToken) external returns (uint256 amount) {
        if (otherToken == t.token) revert CommittedToken();
        if (otherToken != address(0) && _bridgeable(t, otherToken)) revert BridgeableToken(otherToken);
        address deposit = _deploy(t);
        amount = otherToken == address(0)
            ? DepositForwarderV3(payable(deposit)).sweepNative(t.payout)
            : DepositForwarderV3(payable(deposit)).sweep(otherToken, t.payout);
        emit Recovered(t.paymentId, deposit, otherToken, t.payout, amount);
    }

    /// Burns the `burnToken` balance of the deposit address through the committed messenger,
    /// minting to this same address on the settlement domain: all of it, or Circle's per-message
    /// burn limit when the balance is above it (the rest in later calls). The caller chooses only
    /// when, a maxFee within the committed bound for the amount burned, and the finality: standard
    /// always, fast only from a domain `fastDomains` names. The messenger refuses tokens it cannot burn.
    /// Refused on the settlement chain (the messenger's local domain is the settlement domain),
    /// whatever the token's address: a source chain's USDC may share the settlement token's address.
    function bridge(Terms calldata t, address burnToken, uint256 maxFee, uint32 minFinalityThreshold)
        external
        returns (address deposit, uint256 amount)
    {
        if (t.tokenMessenger.code.length == 0) revert NoMessenger();
        uint32 domain = _localDomain(t.tokenMessenger);
        if (domain == t.settlementDomain) revert SettlementChain();
        // A shift by 256 or more is zero: no domain that high is ever fast.
        if (minFinalityThreshold < FINALITY_STANDARD && (t.fastDomains >> domain) & 1 == 0) {
            revert FinalityNotAllowed(domain, minFinalityThreshold);
        }
        deposit = _deploy(t);
        amount = DepositForwarderV3(payable(deposit)).balanceOf(burnToken);
        // Circle's minter refuses a burn above its limit; a token without one is left for it to refuse.
        uint256 limit = _burnLimit(t.tokenMessenger, burnToken);
        if (limit > 0 && amount > limit) amount = limit;
        if (maxFee * 10000 > amount * t.maxBridgeFeeBps) revert BridgeFeeTooHigh(maxFee, amount, t.maxBridgeFeeBps);
        DepositForwarderV3(payable(deposit)).burn(
            t.tokenMessenger,
            burnToken,
            amount,
            t.settlementDomain,
            bytes32(uint256(uint160(deposit))),
            maxFee,
            minFinalityThreshold
        );
        emit Bridged(t.paymentId, deposit, burnToken, amount, t.settlementDomain, maxFee, minFinalityThreshold);
    }

    /// Whether `bridge` can take `token` from this chain to the settlement domain as the committed
    /// messenger stands configured: its minter burns the token, it has a messenger registered for
    /// the settlement domain (else its `depositForBurn` refuses the domain), and its minimum fee
    /// (CCTP V2.1) fits the committed bound. Passing states (a pause, a denylisted caller) do not count.
    function _bridgeable(Terms calldata t, address token) private view returns (bool) {
        if (_burnLimit(t.tokenMessenger, token) == 0) return false;
        if (ITokenMessengerV2(t.tokenMessenger).remoteTokenMessengers(t.settlementDomain) == bytes32(0)) return false;
        // minFee is in 1/1000 bp (Circle's MIN_FEE_MULTIPLIER is 10_000_000), the bound in bp.
        return _minFee(t.tokenMessenger) <= uint256(t.maxBridgeFeeBps) * 1000;
    }

    /// The most one burn through `messenger` may take of `token` here: its minter's per-message
    /// limit. Zero when nothing can burn it: no messenger on this chain, or one without a minter.
    function _burnLimit(address messenger, address token) private view returns (uint256) {
        if (messenger.code.length == 0) return 0;
        address minter = ITokenMessengerV2(messenger).localMinter();
        if (minter == address(0)) return 0;
        return ITokenMinterV2(minter).burnLimitsPerMessage(token);
    }

    /// The messenger's minimum fee; zero for a TokenMessengerV2 from before V2.1, which has none.
    function _minFee(address messenger) private view returns (uint256) {
        (bool ok, bytes memory ret) = messenger.staticcall(abi.encodeCall(ITokenMessengerV2.minFee, ()));
        return ok && ret.length >= 32 ? abi.decode(ret, (uint256)) : 0;
    }

    /// The CCTP domain of this chain, from the messenger's transmitter.
    function _localDomain(address messenger) private view returns (uint32) {
        return IMessageTransmitterV2(ITokenMessengerV2(messenger).localMessageTransmitter()).localDomain();
    }

    /// Returns the deposit address for the terms, deploying its clone if it has no code yet.
    function _deploy(Terms calldata t) private returns (address deposit) {
        if (t.feeBps > 10000) revert FeeTooHigh(t.feeBps);
        if (t.maxBridgeFeeBps > 10000) revert FeeTooHigh(t.maxBridgeFeeBps);
        if (t.feeBps > 0 && t.feeRecipient == address(0)) revert MissingFeeRecipient();
        if (t.payout == address(0)) revert MissingPayout();
        deposit = depositAddress(t);
        if (deposit.code.length > 0) return deposit;
        bytes memory code = _cloneCode();
        bytes32 s = salt(t);
        address created;
        assembly ("memory-safe") {
            created := create2(0, add(code, 0x20), mload(code), s)
        }
        if (created != deposit) revert DeployFailed();
    }

    /// EIP-1167 minimal proxy init code delegating to IMPLEMENTATION.
    function _cloneCode() private view returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73", address(IMPLEMENTATION), hex"5af43d82803e903d91602b57fd5bf3"
        );
    }
}
