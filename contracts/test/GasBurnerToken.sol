// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Test-only hostile ERC-20: minting and balances are honest (a real Transfer log to the
/// recipient), but every `transfer` also writes `burnSlots` fresh storage slots, about 22,000 gas
/// each, at the expense of whoever sends the transaction. What a recovery must refuse to pay for.
contract GasBurnerToken {
    uint8 public constant decimals = 18;
    uint256 public immutable burnSlots;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    /// Written on every transfer: a new slot each time, so each write is a fresh (expensive) one.
    mapping(uint256 => uint256) public scratch;
    uint256 public scratchUsed;

    event Transfer(address indexed from, address indexed to, uint256 value);

    error InsufficientBalance(address account, uint256 balance, uint256 needed);

    constructor(uint256 burnSlots_) {
        burnSlots = burnSlots_;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 balance = balanceOf[msg.sender];
        if (balance < amount) revert InsufficientBalance(msg.sender, balance, amount);
        balanceOf[msg.sender] = balance - amount;
        balanceOf[to] += amount;
        uint256 used = scratchUsed;
        for (uint256 i = 0; i < burnSlots; i++) {
            scratch[used + i] = block.number + i + 1;
        }
        scratchUsed = used + burnSlots;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}
