// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The code behind every deposit address. Each deposit address is an EIP-1167 clone of
/// this contract deployed by `DepositFactory` with CREATE2; the factory has already checked that
/// the recipients and fee it passes are the ones committed to in the clone's salt, so the
/// forwarder only has to trust its caller.
contract DepositForwarder {
    /// The factory that deployed this implementation; the only caller it obeys. Immutable, so it
    /// lives in the code and every clone (which delegates here) sees the same value.
    address public immutable FACTORY;

    error NotFactory();
    /// An ERC-20 transfer reverted or returned false. `reason` is the token's revert data.
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
        amount = _balanceOf(token);
        fee = (amount * feeBps) / 10000;
        if (fee > 0) _transfer(token, feeRecipient, fee);
        if (amount > fee) _transfer(token, payout, amount - fee);
    }

    /// Sends the whole balance of `token` to `payout`, without fee.
    function sweep(address token, address payout) external onlyFactory returns (uint256 amount) {
        amount = _balanceOf(token);
        if (amount > 0) _transfer(token, payout, amount);
    }

    /// Sends the whole native-coin balance to `payout`.
    function sweepNative(address payout) external onlyFactory returns (uint256 amount) {
        amount = address(this).balance;
        if (amount > 0) {
            (bool ok, bytes memory reason) = payout.call{value: amount}("");
            if (!ok) revert NativeTransferFailed(payout, amount, reason);
        }
    }

    function _balanceOf(address token) private view returns (uint256) {
        return IERC20Minimal(token).balanceOf(address(this));
    }

    /// Accepts tokens that return true and tokens that return nothing (USDT-style); anything
    /// else, including a revert (USDC on a blacklisted recipient), reverts the whole call.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IERC20Minimal.transfer, (to, amount)));
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
}
