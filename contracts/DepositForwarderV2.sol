// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The code behind every version-2 deposit address: an EIP-1167 clone of this contract
/// deployed by `DepositFactoryV2` with CREATE2. As in version 1, the factory has already checked
/// that what it passes is what the clone's salt commits to, so the forwarder only trusts its caller.
contract DepositForwarderV2 {
    /// The factory that deployed this implementation; the only caller it obeys. Immutable, so it
    /// lives in the code and every clone (which delegates here) sees the same value.
    address public immutable FACTORY;

    error NotFactory();
    /// An ERC-20 call (transfer, approve) reverted or returned false. `reason` is the token's revert data.
    error TokenTransferFailed(address token, address to, uint256 amount, bytes reason);
    error NativeTransferFailed(address to, uint256 amount, bytes reason);

    constructor() {
        FACTORY = msg.sender;
    }

    modifier onlyFactory() {
        if (msg.sender != FACTORY) revert NotFactory();
        _;
    }

    receive() external payable {}

    /// Sends the whole `token` balance: floor(balance * feeBps / 10000) to `feeRecipient`, the
    /// rest to `payout`. Zero amounts are not transferred (some tokens revert on them).
    function forward(address token, address payout, address feeRecipient, uint16 feeBps)
        external
        onlyFactory
        returns (uint256 amount, uint256 fee)
    {
        amount = balanceOf(token);
        fee = (amount * feeBps) / 10000;
        if (fee > 0) _call(token, abi.encodeCall(IERC20Minimal.transfer, (feeRecipient, fee)), feeRecipient, fee);
        if (amount > fee) {
            _call(token, abi.encodeCall(IERC20Minimal.transfer, (payout, amount - fee)), payout, amount - fee);
        }
    }

    /// Sends the whole balance of `token` to `payout`, without fee.
    function sweep(address token, address payout) external onlyFactory returns (uint256 amount) {
        amount = balanceOf(token);
        if (amount > 0) _call(token, abi.encodeCall(IERC20Minimal.transfer, (payout, amount)), payout, amount);
    }

    /// Sends the whole native-coin balance to `payout`.
    function sweepNative(address payout) external onlyFactory returns (uint256 amount) {
        amount = address(this).balance;
        if (amount > 0) {
            (bool ok, bytes memory reason) = payout.call{value: amount}("");
            if (!ok) revert NativeTransferFailed(payout, amount, reason);
        }
    }

    /// Burns `amount` of `burnToken` through `messenger` (CCTP V2's TokenMessengerV2), minting to
    /// `mintRecipient` on `destinationDomain`, with no destination caller and no hook.
    function burn(
        address messenger,
        address burnToken,
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external onlyFactory {
        _call(burnToken, abi.encodeCall(IERC20Minimal.approve, (messenger, amount)), messenger, amount);
        ITokenMessengerV2(messenger).depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, bytes32(0), maxFee, minFinalityThreshold
        );
    }

    function balanceOf(address token) public view returns (uint256) {
        return IERC20Minimal(token).balanceOf(address(this));
    }

    /// Accepts tokens that return true and tokens that return nothing (USDT-style); anything
    /// else, including a revert (USDC on a blacklisted recipient), reverts the whole call.
    function _call(address token, bytes memory data, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (ok) {
            if (ret.length == 0) {
                // No return value is only acceptable from a contract: a call to an empty account succeeds too.
                if (token.code.length > 0) return;
            } else if (ret.length >= 32 && abi.decode(ret, (uint256)) == 1) {
                return;
            }
        }
        revert TokenTransferFailed(token, to, amount, ret);
    }
}

interface IERC20Minimal {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
}

/// @notice The part of Circle's TokenMessengerV2 the deposit addresses use.
interface ITokenMessengerV2 {
    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external;

    /// The MessageTransmitterV2 that sends its messages (a public variable in BaseTokenMessenger).
    function localMessageTransmitter() external view returns (address);

    /// The TokenMinterV2 that burns and mints on this chain (a public variable in BaseTokenMessenger;
    /// zero once Circle removes it).
    function localMinter() external view returns (address);

    /// The messenger trusted on `domain`; zero for a domain burns cannot go to (BaseTokenMessenger).
    function remoteTokenMessengers(uint32 domain) external view returns (bytes32);

    /// The least maxFee a burn must offer, in 1/1000 bp of the amount (V2.1; absent before).
    function minFee() external view returns (uint256);
}

/// @notice Circle's TokenController: a token the minter can burn has a non-zero per-message limit.
interface ITokenMinterV2 {
    function burnLimitsPerMessage(address token) external view returns (uint256);
}

/// @notice The part of Circle's MessageTransmitterV2 the factory reads.
interface IMessageTransmitterV2 {
    function localDomain() external view returns (uint32);
}
